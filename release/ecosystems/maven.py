"""Maven: dev.svcstub:svc-stub-junit's jar, sources jar, javadoc jar (doclint, warnings fail) and
a POM with what Maven Central requires, published to a file Maven repository for a new project."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

from steps import ROOT, Ecosystem, ReleaseError, Workspace, copied, emptied, run

NAME = "maven"
PACKAGE = Path("clients/java")
ARTIFACT = "svc-stub-junit"
GROUP = "dev.svcstub"
PROJECT = ROOT / "release" / "projects" / NAME
REPOSITORY_URL = "@SVC_STUB_REPOSITORY@"
"""The placeholder in the new project's pom.xml that the file repository's url replaces."""

MAVEN = ("mvn", "-B", "-ntp")
DEPLOY_FILE = "org.apache.maven.plugins:maven-deploy-plugin:3.1.2:deploy-file"
"""Pinned as the package's pom pins it: Maven 3.8's default deploy plugin is 2.x."""

POM = "{http://maven.apache.org/POM/4.0.0}"
CENTRAL_REQUIRES = (
    ("groupId",),
    ("artifactId",),
    ("version",),
    ("name",),
    ("description",),
    ("url",),
    ("licenses", "license", "name"),
    ("developers", "developer", "name"),
    ("scm", "connection"),
    ("scm", "developerConnection"),
    ("scm", "url"),
)
"""Each element Maven Central's validation requires of a POM, as a path from <project>."""

JAVADOC_PROBLEM = re.compile(r"(\S+\.java):(\d+): (?:error|warning): (.*)")


def check_pom(pom: Path) -> None:
    """The one place that says which element Maven Central would find missing from a POM."""
    try:
        project = ElementTree.parse(pom).getroot()
    except ElementTree.ParseError as broken:
        raise ReleaseError(f"{pom.name}: not a POM Maven Central would read: {broken}") from None
    for path in CENTRAL_REQUIRES:
        found = project.find("/".join(POM + part for part in path))
        if found is None or not (found.text or "").strip():
            element = "".join(f"<{part}>" for part in path)
            raise ReleaseError(
                f"{ARTIFACT} {pom.name}: Maven Central would refuse it: no {element}"
            )


def build(workspace: Workspace) -> list[Path]:
    package = _copied(workspace.scratch(NAME) / "build")
    return _built(package, emptied(workspace.dist(NAME)))


def publish(workspace: Workspace, artifacts: list[Path]) -> None:
    pom, jar, sources, javadoc = artifacts
    registry = emptied(workspace.registry(NAME))
    run(
        [
            *MAVEN,
            DEPLOY_FILE,
            f"-Dfile={jar}",
            f"-DpomFile={pom}",
            f"-Dsources={sources}",
            f"-Djavadoc={javadoc}",
            "-DrepositoryId=rehearsal",
            f"-Durl={registry.as_uri()}",
        ],
        cwd=workspace.dist(NAME),
        env=workspace.env(),
        refused=f"{GROUP}:{ARTIFACT}: deploying to the file repository {registry} failed",
    )
    published = registry / GROUP.replace(".", "/") / ARTIFACT / workspace.version
    for artifact in artifacts:
        if not (published / artifact.name).is_file():
            raise ReleaseError(f"{artifact.name}: not in the file repository at {published}")


def rehearse(workspace: Workspace) -> None:
    project = workspace.new_project(NAME)
    manifest = project / "pom.xml"
    written = manifest.read_text(encoding="utf-8")
    if REPOSITORY_URL not in written:
        raise ReleaseError(
            f"{PROJECT / 'pom.xml'}: no {REPOSITORY_URL} for the file repository's url"
        )
    manifest.write_text(
        written.replace(REPOSITORY_URL, workspace.registry(NAME).as_uri()), encoding="utf-8"
    )
    # A local repository of the project's own: the user's ~/.m2 may hold a svc-stub-junit that
    # `mvn install` put there from the clone, which Maven would take instead of the published one.
    local = workspace.scratch(NAME) / "project-m2"
    shutil.rmtree(local / GROUP.replace(".", "/"), ignore_errors=True)
    said = run(
        [*MAVEN, f"-Dmaven.repo.local={local}", "test"],
        cwd=project,
        env=workspace.env(),
        refused="the new Maven project's `mvn test` failed",
    )
    tests = re.findall(r"Tests run: (\d+), Failures: 0, Errors: 0, Skipped: 0$", said, re.MULTILINE)
    if not tests or int(tests[-1]) < 1:
        raise ReleaseError("the new Maven project's `mvn test` ran no test")
    origin = local / GROUP.replace(".", "/") / ARTIFACT / workspace.version / "_remote.repositories"
    if "svc-stub-rehearsal" not in (origin.read_text() if origin.is_file() else ""):
        raise ReleaseError(f"{GROUP}:{ARTIFACT} did not come from the file repository ({origin})")


def refusal(workspace: Workspace) -> str:
    """Two broken copies, each put to `build`'s own checks: an unknown javadoc tag, and a POM
    without <licenses>."""
    scratch = workspace.scratch(NAME)
    javadoc = _copied(scratch / "refused-javadoc")
    source = javadoc / "src/main/java/dev/svcstub/junit/SvcStubExtension.java"
    anchor = "\n */\npublic final class SvcStubExtension"
    text = source.read_text(encoding="utf-8")
    if anchor not in text:
        raise ReleaseError(f"{source.name}: no class comment to put an unknown tag in")
    unknown = "\n *\n * @notATag a deliberate javadoc error: the rehearsal's refusal"
    source.write_text(text.replace(anchor, unknown + anchor, 1), encoding="utf-8")
    licence = _copied(scratch / "refused-licence")
    pom = licence / "pom.xml"
    pom.write_text(
        re.sub(r"\s*<licenses>.*?</licenses>", "", pom.read_text(), flags=re.DOTALL),
        encoding="utf-8",
    )
    said = []
    for package, what in (
        (javadoc, "an unknown javadoc tag"),
        (licence, "a POM without <licenses>"),
    ):
        try:
            _built(package, emptied(scratch / f"{package.parent.name}-dist"))
        except ReleaseError as refused:
            said.append(str(refused).splitlines()[0])
        else:
            raise ReleaseError(f"{ARTIFACT}: {what} was accepted")
    return "; ".join(said)


def _built(package: Path, dist: Path) -> list[Path]:
    """The POM checked, then the jar, sources jar and javadoc jar built (tests skipped: the
    suite runs in CI) and checked; all four copied to `dist`, POM first."""
    check_pom(package / "pom.xml")
    try:
        run([*MAVEN, "-q", "-DskipTests", "package"], cwd=package)
    except ReleaseError as failed:
        problem = JAVADOC_PROBLEM.search(str(failed))
        if problem is None:
            raise
        where = Path(problem[1]).name
        raise ReleaseError(
            f"{ARTIFACT}: javadoc refused it: {where}:{problem[2]}: {problem[3]}"
        ) from None
    stem = f"{ARTIFACT}-{_version(package)}"
    target = package / "target"
    pom = shutil.copyfile(package / "pom.xml", dist / f"{stem}.pom")
    jars = [
        shutil.copy2(target / f"{stem}{suffix}.jar", dist)
        for suffix in ("", "-sources", "-javadoc")
    ]
    jar, sources, javadoc = (Path(each) for each in jars)
    _require(jar, "dev/svcstub/junit/SvcStubExtension.class", "META-INF/LICENSE")
    _require(sources, "dev/svcstub/junit/SvcStubExtension.java")
    _require(javadoc, "index.html", "dev/svcstub/junit/SvcStubExtension.html")
    return [Path(pom), jar, sources, javadoc]


def _require(jar: Path, *names: str) -> None:
    """Each name inside the jar, at its root or under a folder (javadoc puts a module's pages
    under the module's name: the jar's Automatic-Module-Name)."""
    with zipfile.ZipFile(jar) as archive:
        held = archive.namelist()
    for name in names:
        if not any(each == name or each.endswith(f"/{name}") for each in held):
            raise ReleaseError(f"{jar.name}: no {name} inside")


def _version(package: Path) -> str:
    found = ElementTree.parse(package / "pom.xml").getroot().find(f"{POM}version")
    if found is None or not found.text:
        raise ReleaseError(f"{package / 'pom.xml'}: no <version>")
    return found.text.strip()


def _copied(where: Path) -> Path:
    """clients/java copied (without its target/) where the repository's layout holds: the jar
    takes ../../LICENSE, the suite reads ../*.json. Maven writes only into the copy."""
    shutil.rmtree(where, ignore_errors=True)
    package = copied(ROOT / PACKAGE, where / PACKAGE, "target")
    shutil.copy2(ROOT / "LICENSE", where / "LICENSE")
    for shared in (ROOT / PACKAGE.parent).glob("*.json"):
        shutil.copy2(shared, package.parent / shared.name)
    return package


ECOSYSTEM = Ecosystem(NAME, build, publish, rehearse, refusal)
