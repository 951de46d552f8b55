// The compiled targets of ccb: one npm platform package and one release tarball each.
// `key` is what the launcher computes at run time: `${process.platform}-${process.arch}` plus
// `-musl` on musl Linux. The platform package is named `<dispatcher name>-<key>`.
// No Windows build yet: PTYs and the workbench are untested there (Windows users run ccb in WSL2);
// `exe` and the zip step of release.yml are ready for a `bun-windows-x64` entry.
export const TARGETS = [
  { key: "linux-x64", os: "linux", cpu: "x64", libc: "glibc", bun: "bun-linux-x64", exe: "ccb" },
  { key: "linux-arm64", os: "linux", cpu: "arm64", libc: "glibc", bun: "bun-linux-arm64", exe: "ccb" },
  { key: "linux-x64-musl", os: "linux", cpu: "x64", libc: "musl", bun: "bun-linux-x64-musl", exe: "ccb" },
  { key: "darwin-arm64", os: "darwin", cpu: "arm64", bun: "bun-darwin-arm64", exe: "ccb" },
  { key: "darwin-x64", os: "darwin", cpu: "x64", bun: "bun-darwin-x64", exe: "ccb" },
];

/** The platform package name for a dispatcher name: `ccb` -> `ccb-linux-x64`, `@s/ccb` -> `@s/ccb-linux-x64`. */
export function platformPackageName(dispatcherName, key) {
  return `${dispatcherName}-${key}`;
}
