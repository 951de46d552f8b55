import { describeProcScan, SCANNED_RUNTIMES } from "../helpers/proc-scan.ts";

/**
 * No secret of a live workbench on a command line or in an environment another account can read,
 * while code-server runs (test/helpers/proc-scan.ts says what is scanned and the positive controls;
 * OpenVSCode: workbench-secrets-openvscode.test.ts; the port squatter: workbench-squatter.test.ts).
 */
describeProcScan(SCANNED_RUNTIMES["code-server"]);
