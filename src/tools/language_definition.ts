import { locationsTool } from "./shared/locations.ts";

export default locationsTool({
  name: "language_definition",
  title: "Go to definition",
  description:
    "Where the symbol at a position is defined, according to the editor's language service (Go to Definition).",
  method: "language.definition",
  heading: "Definition(s)",
  none: "No definition found at that position.",
});
