/** svc-stub's version: the stub's and every helper's (the suite checks all three agree). */
export const VERSION = "0.1.0";

/**
 * Whether a stub of version `stub` is recent enough for this helper, by the one rule every helper
 * follows (clients/compatibility.json): its release numbers (X.Y.Z) at least `need`'s; at equal
 * numbers a prerelease stub (`0.2.0-rc.1`, `0.2.0rc1`, `0.2.0.dev1`) is older than a final
 * helper, and any prerelease of those numbers goes with any other. Build metadata (`+...`) is
 * ignored, a leading `v` allowed. Not a version at all: false.
 */
export function isRecentEnough(stub: string, need: string = VERSION): boolean {
  const have = parsed(stub);
  const wanted = parsed(need);
  if (have === undefined || wanted === undefined) return false;
  for (let i = 0; i < 3; i++) if (have.core[i] !== wanted.core[i]) return have.core[i]! > wanted.core[i]!;
  return !have.prerelease || wanted.prerelease;
}

interface Version {
  core: [number, number, number];
  prerelease: boolean;
}

/** X.Y.Z, then a semver prerelease (`-rc.1`) or a Python one (`rc1`, `a1`, `b2`, `.dev1`), then `+build`. */
const VERSION_PATTERN = /^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+|(?:a|b|rc)\d+(?:\.dev\d+)?|\.dev\d+)?(?:\+[0-9A-Za-z.-]+)?$/;

function parsed(version: string): Version | undefined {
  const match = VERSION_PATTERN.exec(version.trim());
  if (match === null) return undefined;
  return { core: [Number(match[1]), Number(match[2]), Number(match[3])], prerelease: match[4] !== undefined };
}
