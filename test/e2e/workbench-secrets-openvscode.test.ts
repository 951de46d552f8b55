import { describeProcScan, SCANNED_RUNTIMES } from "../helpers/proc-scan.ts";

/**
 * No secret of a live workbench on a command line or in an environment another account can read,
 * while ccb's OpenVSCode launcher runs the live OpenVSCode-shaped archive (test/fixtures/runtime/live.ts:
 * VS Code's own server-main.js and flags, as code-server's package carries them; see proc-scan.ts).
 */
describeProcScan(SCANNED_RUNTIMES.openvscode);
