/**
 * The bridge contract, as the workbench and its bridge extension import it. The schemas live in
 * src/core/editor/contract.ts, below both the core's editor port and the workbench.
 */
export * from "../core/editor/contract.ts";
