import { locationsTool } from "./shared/locations.ts";

export default locationsTool({
  name: "language_implementations",
  title: "Find implementations",
  description:
    "The implementations of the interface, abstract class or method at a position, according to the editor's language service (Go to Implementations).",
  method: "language.implementations",
  heading: "Implementation(s)",
  none: "No implementations found at that position.",
});
