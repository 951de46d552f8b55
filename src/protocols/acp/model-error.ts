/** A model failure with a message meant for the user (shown in the editor, not a stack trace). */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = "ModelError";
  }
}
