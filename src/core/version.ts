import pkg from "../../package.json" with { type: "json" };

export const CCB_VERSION: string = pkg.version;
/** The npm name of ccb's dispatcher package; its platform and runtime packages are named after it. */
export const CCB_PACKAGE_NAME: string = pkg.name;
