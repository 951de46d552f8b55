import { locationsTool } from "./shared/locations.ts";

export default locationsTool({
  name: "language_type_definition",
  title: "Go to type definition",
  description:
    "Where the type of the symbol at a position is defined (e.g. the interface of a variable), according to the editor's language service.",
  method: "language.typeDefinition",
  heading: "Type definition(s)",
  none: "No type definition found at that position.",
});
