import { pathToFileURL } from "node:url";
import { keepArtifacts } from "./artifacts.ts";

/**
 * Preloaded into every test file's process by `npm test` and the soak (scripts/test-setup.mjs,
 * `--import`): whichever test fails saves what the live helpers hold (artifacts.ts), in every file,
 * without the file having to ask. The test runner starts each file as `node <file>`.
 */
const file = process.argv[1];
if (file?.endsWith(".test.ts")) keepArtifacts(pathToFileURL(file).href);
