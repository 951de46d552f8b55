import { createHmac } from "node:crypto";
import { newToken, tokensEqual } from "../../util/secrets.ts";
import type { ClientFrame, FrontEnd, ServerFrame } from "./protocol.ts";

/**
 * The attach channel's mutual proof. The share secret never travels: not in the upgrade request,
 * not in a frame. Whoever listens on a published gateway's port (a dead host's port another
 * account bound, a stopped owner's) learns a nonce and the front end's pid, nothing else.
 *
 *   front end → hello     { nonce: cn }                    (nothing secret)
 *   host      → challenge { nonce: sn, proof: HMAC(secret, "host"   | gateway | cn | sn) }
 *   front end   checks the proof in constant time; a listener that cannot make it is refused here
 *   front end → prove     { proof: HMAC(secret, "client" | gateway | cn | sn) }
 *   host        checks it in constant time (else 4401), then → welcome
 *
 * Both proofs cover both nonces (fresh per connection: no replay), a role label (the host's answer
 * is no client proof, so a host cannot be used as an oracle against another), and the gateway URL
 * the front end read in the record (an answer relayed from another gateway does not match).
 */

/** How long either side waits for the other's next handshake frame. */
export const HANDSHAKE_MS = 5_000;

const LABEL = "ccb-share-attach-v2";

function proof(role: "host" | "client", secret: string, gatewayUrl: string, cn: string, sn: string): string {
  return createHmac("sha256", secret).update(`${LABEL}\n${role}\n${gatewayUrl}\n${cn}\n${sn}`).digest("base64url");
}

export type Purpose = "attach" | "query";

/** The front end's side: says hello, checks the host's proof before it proves anything itself. */
export class ClientHandshake {
  readonly #cn = newToken(24);
  #phase: "challenge" | "welcome" | "done" = "challenge";

  constructor(
    private readonly secret: string,
    private readonly gatewayUrl: string,
    private readonly who: { frontEnd: FrontEnd; pid: number; purpose: Purpose },
  ) {}

  /** The first frame (nothing secret in it). */
  hello(): ClientFrame {
    return {
      type: "hello",
      frontEnd: this.who.frontEnd,
      pid: this.who.pid,
      nonce: this.#cn,
      ...(this.who.purpose === "query" ? { purpose: "query" as const } : {}),
    };
  }

  get done(): boolean {
    return this.#phase === "done";
  }

  /**
   * The next step for a frame from the listener: a frame to send (the client's proof, only after
   * the host proved itself), "welcomed", or "refused" (anything else: the listener is not the host).
   */
  step(frame: ServerFrame): { send: ClientFrame } | "welcomed" | "refused" {
    if (this.#phase === "challenge" && frame.type === "challenge") {
      const expected = proof("host", this.secret, this.gatewayUrl, this.#cn, frame.nonce);
      if (!tokensEqual(frame.proof, expected)) return "refused";
      this.#phase = "welcome";
      return {
        send: { type: "prove", proof: proof("client", this.secret, this.gatewayUrl, this.#cn, frame.nonce) },
      };
    }
    if (this.#phase === "welcome" && frame.type === "welcome") {
      this.#phase = "done";
      return "welcomed";
    }
    return "refused";
  }
}

/** The host's side: answers a hello with its proof, then checks the client's. */
export class HostHandshake {
  readonly #sn = newToken(24);
  #cn: string | undefined;

  constructor(
    private readonly secret: string,
    private readonly gatewayUrl: string,
  ) {}

  /** The challenge for a hello's nonce. */
  challenge(clientNonce: string): ServerFrame {
    this.#cn = clientNonce;
    return {
      type: "challenge",
      nonce: this.#sn,
      proof: proof("host", this.secret, this.gatewayUrl, clientNonce, this.#sn),
    };
  }

  /** Whether the client's proof is right (constant-time compare). */
  verify(clientProof: string): boolean {
    if (this.#cn === undefined) return false;
    return tokensEqual(clientProof, proof("client", this.secret, this.gatewayUrl, this.#cn, this.#sn));
  }
}
