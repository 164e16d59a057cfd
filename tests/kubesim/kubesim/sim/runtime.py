"""What a simulated container does once started.

No process runs: the container's command and args decide whether it keeps running or
exits, when, and with which code. The rules (also in README.md):
- a `sleep N` anywhere in command/args (also inside `sh -c "..."`): runs N simulated
  seconds, then exits (`sleep infinity` runs forever);
- otherwise a word naming a short-lived program (`true`, `/ota-bin/true`, `cp`, `install`,
  `ln`, `echo`, `mkdir`, `touch`, `chmod`, `date`) or `false`/`exit N`: exits after
  SHORT_RUN seconds;
- exit code: `exit N` gives N, `false` gives 1, anything else 0;
- anything else (no command at all, `nginx`, `sleep infinity`, ...) runs until killed.
"""

import re

SHORT_RUN = 0.5
_SHORT_LIVED = {"true", "cp", "install", "ln", "echo", "mkdir", "touch", "chmod", "date",
                "false"}


def _words(container):
    words = []
    for part in (container.get("command") or []) + (container.get("args") or []):
        words += [w for w in re.split(r"[\s;&|()]+", str(part)) if w]
    return words


def behaviour(container):
    """(seconds until the container exits or None for never, exit code)."""
    words = _words(container)
    names = [w.rsplit("/", 1)[-1] for w in words]
    code = 0
    if "false" in names:
        code = 1
    for i, w in enumerate(names[:-1]):
        if w == "exit" and names[i + 1].isdigit():
            code = int(names[i + 1])
    for i, w in enumerate(names[:-1]):
        if w == "sleep":
            arg = names[i + 1]
            if arg == "infinity":
                return None, 0
            m = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", arg)
            if m:
                seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]
                return seconds, code
    if "exit" in names or any(n in _SHORT_LIVED for n in names):
        return SHORT_RUN, code
    return None, 0
