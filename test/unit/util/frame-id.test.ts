import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { idFromPrefix, idFromSuffix } from "../../../src/util/frame-id.ts";

describe("idFromPrefix (the id of an oversized stdio frame)", () => {
  it("reads a top-level number or string id from a cut-off frame", () => {
    assert.equal(
      idFromPrefix('{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"content":"xxxx'),
      42,
    );
    assert.equal(idFromPrefix('{"method":"tools/call","jsonrpc":"2.0", "id" : "req-7", "params":{"a'), "req-7");
    assert.equal(
      idFromPrefix('{"jsonrpc":"2.0","method":"x","params":{"id":9,"deep":[1,{"id":3}]},"id":5,"pad":"yyy'),
      5,
    );
  });
  it("never takes an id nested in params, and gives null when the id is past the cut or unusable", () => {
    assert.equal(idFromPrefix('{"jsonrpc":"2.0","method":"x","params":{"id":9,"content":"xxxxx'), null);
    assert.equal(idFromPrefix('{"params":{"s":"a \\"id\\":3 b"},"id":1}'), 1);
    assert.equal(idFromPrefix('{"id":1.5,"method":"x"}'), null);
    assert.equal(idFromPrefix('{"id":null,"method":"x"}'), null);
    assert.equal(idFromPrefix('{"id":123456789012345678901234,"method":"x"}'), null);
    assert.equal(idFromPrefix('["id",1]'), null);
    assert.equal(idFromPrefix('{"id":12'), null, "a number cut at the end may be longer");
  });
});

describe("idFromSuffix (the SDK writes id last)", () => {
  it("reads the id among the last primitive members of the outer object", () => {
    assert.equal(idFromSuffix('xxxx"}},"jsonrpc":"2.0","id":7}'), 7);
    assert.equal(idFromSuffix('xxxx"}},"id":"a\\"b","jsonrpc":"2.0"}\r'), 'a"b');
    assert.equal(idFromSuffix('xx"}, "id" : 12 }'), 12);
  });
  it("null when the last member closes a nested value or the id is unusable", () => {
    assert.equal(idFromSuffix('xx","id":3}}'), null, "an id nested one level down is not taken");
    assert.equal(idFromSuffix('xx"},"id":1.5}'), null);
    assert.equal(idFromSuffix('xx"},"method":"m"}'), null);
    assert.equal(idFromSuffix("xxxx"), null);
  });
});
