import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { echoedId, errorResponse, idMember, isJsonRpcId, JsonRpcCode } from "../../../src/util/jsonrpc.ts";

describe("util/jsonrpc: the JSON-RPC pieces every wire shares", () => {
  it("the error codes are JSON-RPC 2.0's", () => {
    assert.deepEqual(JsonRpcCode, {
      ParseError: -32700,
      InvalidRequest: -32600,
      MethodNotFound: -32601,
      InvalidParams: -32602,
      InternalError: -32603,
    });
  });

  it("a request id is a string or a number, nothing else", () => {
    for (const id of ["", "a", 0, -1, 1.5, 2 ** 60]) assert.equal(isJsonRpcId(id), true, String(id));
    for (const id of [null, undefined, true, {}, [], Number.NaN]) assert.equal(isJsonRpcId(id), false, String(id));
  });

  it("a refusal echoes a string id of at most 256 characters or a safe integer, else null", () => {
    assert.equal(echoedId("x".repeat(256)), "x".repeat(256));
    assert.equal(echoedId("x".repeat(257)), null);
    assert.equal(echoedId(7), 7);
    assert.equal(echoedId(-7), -7);
    assert.equal(echoedId(1.5), null);
    assert.equal(echoedId(2 ** 60), null);
    assert.equal(echoedId(null), null);
    assert.equal(echoedId({ id: 1 }), null);
  });

  it("the id member is read from objects only", () => {
    assert.equal(idMember({ id: 3 }), 3);
    assert.equal(idMember({}), undefined);
    assert.equal(idMember([{ id: 3 }]), undefined);
    assert.equal(idMember(null), undefined);
    assert.equal(idMember("id"), undefined);
  });

  it("an error response carries data only when given", () => {
    assert.deepEqual(errorResponse(1, -32600, "no"), { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "no" } });
    assert.deepEqual(errorResponse(null, -32600, "no", { max: 2 }), {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "no", data: { max: 2 } },
    });
  });
});
