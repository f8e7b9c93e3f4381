/**
 * What can go wrong, each with a message of one line that says what to do. Every error the
 * package throws of its own is a `SvcStubError`; a wrong call is refused the way the stub would
 * refuse it (a `StubError`), whether the package saw it before sending or the stub did.
 */

/** Every error of this package's own: `catch (e) { if (e instanceof SvcStubError) ... }`. */
export class SvcStubError extends Error {
  override name = "SvcStubError";
}

/** The stub refused a control call: its status, its error code and its message. */
export class StubError extends SvcStubError {
  override name = "StubError";

  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    message = `${status} ${code}: ${detail}`,
  ) {
    super(message);
  }
}

/**
 * A call the stub would refuse (an unknown fault mode, selector or option, a wait out of range),
 * refused here before anything is sent: a `StubError` with the stub's status and the code
 * `INVALID_ARGUMENT`, its message the mistake and the choices.
 */
export class StubArgumentError extends StubError {
  override name = "StubArgumentError";

  constructor(detail: string) {
    super(400, "INVALID_ARGUMENT", detail, detail);
  }
}

/** Nothing (or something other than svc-stub) answers at the stub's URL; `cause` is why, as fetch said it. */
export class StubUnreachable extends SvcStubError {
  override name = "StubUnreachable";

  constructor(
    message: string,
    /** Why, in a few words (`ECONNREFUSED`). */
    readonly reason: string = message,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The stub answered, but not as this helper expects (a field missing or of another type): a stub
 * of another version, or something else at its URL. The message names the call and the field.
 */
export class StubAnswerError extends SvcStubError {
  override name = "StubAnswerError";
}

/** A stub could not be started: no `svc-stub` to run, or it stopped before it was ready. */
export class StubStartError extends SvcStubError {
  override name = "StubStartError";
}

/** A wait on the journal ran out; the message shows what did arrive. */
export class WaitTimeout extends SvcStubError {
  override name = "WaitTimeout";
}
