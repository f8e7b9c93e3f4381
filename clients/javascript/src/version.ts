/** svc-stub's version: the stub's and every helper's (the suite checks all three agree). */
export const VERSION = "0.1.0";

/** Whether a stub of version `stub` is recent enough for this helper (semver, numerically). */
export function isRecentEnough(stub: string): boolean {
  const parts = (version: string) => version.split(/[.+-]/).slice(0, 3).map(Number);
  const [have, need] = [parts(stub), parts(VERSION)];
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (Number.isNaN(a)) return false;
    if (a !== b) return a > b;
  }
  return true;
}
