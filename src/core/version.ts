import pkg from "../../package.json" with { type: "json" };

export const CCB_VERSION: string = pkg.version;
