#!/usr/bin/env python3
"""The layout rule of README.md ("Layout"), checked on what was really linked.

lib/ and net/ hold only what two or more programs link (of the three:
ota-webhook, ota-controller, kubectl-ota; any two will do).  This reads each
program's link map (which archive members the linker pulled in) and the
compiler's dependency files of those objects (which headers they included),
and fails when a source file or a header of a shared layer is used by fewer
than two programs: such a file belongs to the one program that uses it.

The other half of the rule, arrows pointing one way, needs no check here:
each folder is compiled with the include paths of itself and the layers
below it only (Makefile, INC_*), so a wrong-way include does not compile.

It also reads the C sources of those folders: an API path is spelled in
kube/kapi.c alone, the table every path is built from, so a string literal
that starts "/api (as "/api/v1/... and "/apis/... do) anywhere else fails
the check.

The daemons' mains hold no option parsing (issue 17): their flags are rows
of a lib/flagtab table (webhook/options.c, controller/flags.c), parsed by a
pure function.  A main may pass argv on, but not read its words (argv[...]),
use getopt, parse numbers (strto*, ato*) or spell a flag ("-x", "--x").

usage: check_layout.py BUILD_DIR PROGRAM...   (exit 1 on a violation)
"""
import os
import re
import sys

SHARED = ("lib", "net")  # the layers whose files must serve two programs
ARCHIVES = {  # archive in the build directory -> source folder
    "libota.a": "lib",
    "libotanet.a": "net",
    "libkube.a": "kube",
    "libwebhook.a": "webhook",
    "libcontroller.a": "controller",
    "libcli.a": "cli",
}
# a program's main object: in the folder named here, else in the folder of
# the program's name
MAIN_FOLDER = {"ota-webhook": "webhook", "ota-controller": "controller", "kubectl-ota": "cli"}
MEMBER = re.compile(r"^\S*?(lib\w+\.a)\((\w+)\.o\)")
# the folders of C code, and the one file an API path may be written in
CODE_FOLDERS = ("lib", "net", "kube", "webhook", "controller", "cli")
API_PATH_HOME = os.path.join("kube", "kapi.c")
API_PATH_LITERAL = re.compile(r'"/api')  # "/api/v1/...", "/apis/GROUP/..."


def linked_objects(build, program):
    """The objects a program was linked from: its main.o and every archive
    member its link map names, as (folder, stem) pairs."""
    objs = set()
    # the maps are in BUILD/maps/ (the Makefile): beside the programs, one
    # named kubectl-ota.map would be a plugin to kubectl
    name = os.path.basename(program)
    with open(os.path.join(build, "maps", name + ".map"), encoding="utf-8", errors="replace") as f:
        for line in f:
            m = MEMBER.match(line)
            if m and m.group(1) in ARCHIVES:
                objs.add((ARCHIVES[m.group(1)], m.group(2)))
    objs.add((MAIN_FOLDER.get(name, name), "main"))
    return objs


def headers_of(build, folder, stem):
    """The project headers an object included, from its .d file."""
    path = os.path.join(build, "obj", folder, stem + ".d")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().replace("\\\n", " ")
    except OSError:
        return set()
    first = text.split("\n", 1)[0]
    deps = first.split(":", 1)[1].split() if ":" in first else []
    return {os.path.normpath(d) for d in deps if d.endswith(".h")}


def api_path_literals():
    """Lines of C code outside API_PATH_HOME with a string literal that
    starts an API path, as "file:line: text"; and how many files were read."""
    found, files = [], 0
    for folder in CODE_FOLDERS:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if not name.endswith((".c", ".h")) or path == API_PATH_HOME:
                continue
            files += 1
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    if API_PATH_LITERAL.search(line):
                        found.append("%s:%d: %s" % (path, n, line.strip()))
    return found, files


DAEMON_MAINS = ("webhook/main.c", "controller/main.c")
OPTION_PARSING = (
    (re.compile(r"\bgetopt\w*|\bopt(arg|ind|opt)\b"), "getopt"),
    (re.compile(r"\bargv\s*\["), "reads argv's words"),
    (re.compile(r"\b(strto(u?ll|u?l|d|f|imax|umax)|ato(i|l|ll|f))\s*\("), "parses a number"),
    (re.compile(r'"\s*--?[A-Za-z]'), "spells a flag"),
)


def code_lines(path):
    """A C file's lines with comments blanked (strings kept), as
    (line number, text)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # a comment becomes as many newlines as it held; strings are skipped whole
    token = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)
    text = token.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else
                     "\n" * m.group(0).count("\n"), text)
    return list(enumerate(text.split("\n"), 1))


def mains_hold_no_option_parsing(mains=DAEMON_MAINS):
    """The violations of "the daemons' mains hold no option parsing"."""
    bad = []
    for path in mains:
        if not os.path.isfile(path):
            bad.append("%s is missing: nothing to check" % path)
            continue
        for n, line in code_lines(path):
            for pattern, what in OPTION_PARSING:
                if pattern.search(line):
                    bad.append("%s:%d %s (%s); flags are rows of a lib/flagtab table"
                               % (path, n, what, line.strip()))
    return bad


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    # paths below are the repository's: read them from its root wherever
    # the check is started, so a check never passes by reading nothing
    build = os.path.abspath(argv[1])
    programs = [os.path.abspath(p) for p in argv[2:]]
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    users = {}  # file -> set of program names that use it
    for prog in programs:
        pname = os.path.basename(prog)
        for folder, stem in linked_objects(build, prog):
            users.setdefault(os.path.join(folder, stem + ".c"), set()).add(pname)
            for h in headers_of(build, folder, stem):
                users.setdefault(h, set()).add(pname)
    bad = []
    for layer in SHARED:
        if not os.path.isdir(layer):
            continue
        for name in sorted(os.listdir(layer)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(layer, name)
            who = sorted(users.get(path, ()))
            if len(who) < 2:
                bad.append("%s is used by %s; %s/ holds only what two or more programs link"
                           % (path, ", ".join(who) if who else "no program", layer))
    for line in bad:
        print("layout: " + line)
    checked = sum(1 for layer in SHARED if os.path.isdir(layer)
                  for n in os.listdir(layer) if n.endswith((".c", ".h")))
    print("layout: %d files of %s checked against %d programs: %d passed, %d failed"
          % (checked, "/, ".join(SHARED) + "/", len(programs), checked - len(bad), len(bad)))
    literals, read = api_path_literals()
    if read == 0:
        literals.append("no C file found in %s" % ", ".join(CODE_FOLDERS))
    for line in literals:
        print("layout: an API path outside %s (build it with kapi_path): %s"
              % (API_PATH_HOME, line))
    print("layout: %d C files read for API paths outside %s: %d found"
          % (read, API_PATH_HOME, len(literals)))
    parsing = mains_hold_no_option_parsing()
    for line in parsing:
        print("layout: " + line)
    print("layout: %s hold no option parsing: %s"
          % (" and ".join(DAEMON_MAINS), "failed" if parsing else "passed"))
    return 1 if bad or literals or parsing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
