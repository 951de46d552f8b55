import { z } from "zod";

/** Shared schema pieces of the git_* tools. */

export const RepoDir = z
  .string()
  .min(1)
  .optional()
  .describe(
    'A directory inside the repository, relative to the workspace root (default "." = the root) or absolute inside a root.',
  );

export const GitPaths = z
  .array(z.string().min(1))
  .max(1000)
  .optional()
  .describe(
    "Only these files or directories (relative to the repository directory given by path, or absolute inside the workspace); taken literally, no globs.",
  );
