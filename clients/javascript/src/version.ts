/** svc-stub's version: the stub's and every helper's (the suite checks all three agree). */
export const VERSION = "0.1.0";

/**
 * Whether a stub of version `stub` is recent enough for this helper: semver precedence
 * (semver.org §11), so `0.2.0-rc.1` is older than `0.2.0` and newer than `0.1.0`; build
 * metadata (`+...`) is ignored. Not a version at all: false.
 */
export function isRecentEnough(stub: string, need: string = VERSION): boolean {
  const have = parsed(stub);
  const wanted = parsed(need);
  return have !== undefined && wanted !== undefined && compared(have, wanted) >= 0;
}

interface Version {
  core: [number, number, number];
  prerelease: string[];
}

function parsed(version: string): Version | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(version.trim());
  if (match === null) return undefined;
  return { core: [Number(match[1]), Number(match[2]), Number(match[3])], prerelease: match[4] ? match[4].split(".") : [] };
}

/** Negative, zero or positive, as `a` precedes, equals or follows `b`. */
function compared(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.core[i] !== b.core[i]) return a.core[i]! - b.core[i]!;
  // a release follows its prereleases
  if (!a.prerelease.length || !b.prerelease.length) return b.prerelease.length - a.prerelease.length;
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    const [x, y] = [a.prerelease[i], b.prerelease[i]];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1; // fewer identifiers: earlier
    if (x === y) continue;
    const [xNumeric, yNumeric] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (xNumeric && yNumeric) return Number(x) - Number(y);
    if (xNumeric !== yNumeric) return xNumeric ? -1 : 1; // numeric identifiers come first
    return x < y ? -1 : 1;
  }
  return 0;
}
