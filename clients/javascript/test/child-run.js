// What the suites' child runs share: a child run (a test runner on files that fail on purpose, a
// run that is interrupted or killed) waited for by what it does (its exit, a line it prints, its
// stub going away), never given a number of seconds to do it in. No test here depends on how fast
// the machine is; the one bound is a guard against a hang.
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A guard against a hang, NOT a speed budget: how long a child run, or a wait on one, may go on
 * before it is taken for hung (the child run is then killed, its process group with it: a test
 * runner's workers too). A child that works ends long before it, even on a busy 2-core CI
 * machine: the slowest of them, journal.spec.js's child Playwright run, takes about 30 s on an
 * idle 2-core machine and 40 s alone on a busy one (inside the suite, longer), where its former
 * budget of 50 s killed it. Ten minutes is over ten times that; a child that takes it is hung.
 */
export const HANG_GUARD_MS = 10 * 60_000;

/**
 * The runner's own timeout for a test (or hook) that waits on a child run: the hang guard and two
 * minutes more, so the runner never cuts the test short while its child still works. A hung child
 * is killed by the guard first, and the test fails with the child's output.
 */
export const CHILD_TEST_TIMEOUT_MS = HANG_GUARD_MS + 2 * 60_000;

/**
 * The per-test timeout (and Playwright's expect timeout) inside a child run: a guard against a
 * hang there, NOT a speed budget. The parent asserts exactly which of the child's tests pass and
 * fail, so a runner default (5 s in Vitest and Jest, 30 s in Playwright Test, 5 s for Playwright's
 * expect) running out on a busy machine would change what the parent sees. Two minutes, well
 * under HANG_GUARD_MS, so that a hung child test is reported by the child run itself.
 */
export const IN_CHILD_TIMEOUT_MS = 2 * 60_000;

/**
 * The per-test (and per-hook) timeout of the suite's own runs (Vitest, Jest, Playwright Test): a
 * guard against a hang, NOT a speed budget. The runners' defaults (5 s in Vitest and Jest, 30 s in
 * Playwright Test) are budgets a busy 2-core CI machine can exceed with a test that works. Two
 * minutes, as in the child runs; a test that waits on a child run gives itself
 * CHILD_TEST_TIMEOUT_MS instead.
 */
export const TEST_TIMEOUT_MS = 2 * 60_000;

/**
 * Playwright's `expect` timeout in the suite's own run (its default is 5 s): how long a web-first
 * assertion (`toHaveText`) retries before it is taken for never coming true. A guard against a
 * hang, NOT a speed budget: an assertion that comes true returns at once, the wait being for the
 * page to render what it waits for (after a Retry-After of a few seconds, in faults.spec.js).
 */
export const EXPECT_TIMEOUT_MS = 60_000;

const hangNote = (what) => `${what}: still going after ${HANG_GUARD_MS / 60_000} min, taken for hung (a hang guard, not a speed budget)`;

/** Kills a detached child's process group (the child, and what it started in its group). */
function killGroup(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL"); // not a group leader (not detached), or already gone
  }
}

/**
 * Runs `command` with `args` to its end, as spawnSync would, but without blocking this process
 * (the runner's own timers and messages go on) and with no time limit but the hang guard:
 * `{ status, signal, stdout, stderr, output }`, `output` being stdout then stderr. A child still
 * running after HANG_GUARD_MS is killed, with its process group, and says so at the end of stderr.
 */
export function runChild(command, args, { cwd, env } = {}) {
  return new Promise((resolve, reject) => {
    // its own process group, for the guard to kill whatever it started along with it
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
    let hung = false;
    const guard = setTimeout(() => {
      hung = true;
      killGroup(child);
    }, HANG_GUARD_MS);
    const orphaned = () => killGroup(child); // this process ends first: its child run goes too
    process.once("exit", orphaned);
    const done = () => {
      clearTimeout(guard);
      process.off("exit", orphaned);
    };
    child.once("error", (error) => {
      done();
      reject(error);
    });
    child.once("close", (status, signal) => {
      done();
      if (hung) stderr += `\n[${hangNote(`${command} ${args.join(" ")}`)}: killed]\n`;
      resolve({ status, signal, stdout, stderr, output: stdout + stderr });
    });
  });
}

/**
 * The first match of `pattern` in what a running `child` prints on stdout, waited for until it
 * is printed; an error, with what the child printed, if it exits without printing it, or if it
 * is still silent after the hang guard (it is then killed, its process group too if it leads
 * one). Call it right after spawning, before the child can print.
 */
export function printed(child, pattern) {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    const finish = (settle, value) => {
      clearTimeout(guard);
      child.stdout.off("data", onStdout);
      child.stderr?.off("data", onStderr);
      child.off("exit", onExit);
      settle(value);
    };
    const onStdout = (chunk) => {
      stdout += chunk;
      const match = stdout.match(pattern);
      if (match) finish(resolve, match);
    };
    const onStderr = (chunk) => (stderr += chunk);
    const onExit = (code, signal) =>
      finish(reject, new Error(`the child exited (${code ?? signal}) without printing ${pattern}:\n${stdout}${stderr}`));
    const guard = setTimeout(() => {
      killGroup(child);
      finish(reject, new Error(`${hangNote(`waiting for ${pattern}`)}, killed:\n${stdout}${stderr}`));
    }, HANG_GUARD_MS);
    child.stdout.on("data", onStdout);
    child.stderr?.on("data", onStderr);
    child.on("exit", onExit);
  });
}

/**
 * A running `child`'s exit, `{ code, signal }`, waited for; if it has not exited after the hang
 * guard, it is killed (its process group too if it leads one) and this rejects.
 */
export function exitOf(child) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      child.off("exit", onExit);
      killGroup(child);
      reject(new Error(hangNote(`waiting for pid ${child.pid} to exit`)));
    }, HANG_GUARD_MS);
    const onExit = (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal });
    };
    child.once("exit", onExit);
  });
}

/**
 * Waits until `check()` (sync or async) is true, asking again every 50 ms: for a state that
 * nothing announces (a stub that stops by itself goes away without a word). An error naming
 * `what` if it is still false after the hang guard.
 */
export async function until(check, what) {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > HANG_GUARD_MS) throw new Error(hangNote(`waiting for ${what}`));
    await sleep(50);
  }
}
