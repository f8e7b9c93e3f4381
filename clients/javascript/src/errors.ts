/** What can go wrong, each with a message of one line that says what to do. */

/** The stub refused a control call: its status, its error code and its message. */
export class StubError extends Error {
  override name = "StubError";

  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${status} ${code}: ${detail}`);
  }
}

/** Nothing (or something other than svc-stub) answers at the stub's URL. */
export class StubUnreachable extends Error {
  override name = "StubUnreachable";

  constructor(
    message: string,
    /** Why, in a few words (`ECONNREFUSED`). */
    readonly reason: string = message,
  ) {
    super(message);
  }
}

/** A stub could not be started: no `svc-stub` to run, or it stopped before it was ready. */
export class StubStartError extends Error {
  override name = "StubStartError";
}

/** A wait on the journal ran out; the message shows what did arrive. */
export class WaitTimeout extends Error {
  override name = "WaitTimeout";
}
