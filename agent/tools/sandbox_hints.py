"""What a command's failure in the sandbox tells the model, and later the user.

A sandboxed command fails the way the sandbox makes things fail (a read-only file system, no
network, this machine's localhost out of reach: the sandbox has its own network namespace, so a
dev server or database on the host answers "Connection refused"). Without a word from cairn the
model concludes the server is down; with one it can ask to run the command outside. When it
does, the user is asked, and is told why: what the sandboxed run of that command said.
"""

from __future__ import annotations

from collections import OrderedDict

# What a command says when the sandbox stopped it (bash, coreutils, Python, Node, Go, git, npm,
# curl, psql), matched case-insensitively, each with why the sandbox does it. A refused
# connection comes first: in the sandbox it only happens on its own loopback.
LOOPBACK_REFUSED = ("Connection refused", "ECONNREFUSED", "Couldn't connect to server")
NO_NETWORK = (
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "getaddrinfo",
    "ENETUNREACH",
    "EAI_AGAIN",
)
READ_ONLY = ("Read-only file system", "EROFS")
FORBIDDEN = ("Operation not permitted",)
SANDBOX_SYMPTOMS = LOOPBACK_REFUSED + NO_NETWORK + READ_ONLY + FORBIDDEN
LOOPBACK_WHY = "the sandbox cannot reach this machine's localhost"
# How many commands' last sandboxed failure a session keeps for its escalation questions.
REMEMBERED_FAILURES = 64


def sandbox_symptom(output: str) -> str:
    """The first sandbox symptom in a command's output, as the table spells it; "" if none."""
    folded = output.casefold()
    return next((symptom for symptom in SANDBOX_SYMPTOMS if symptom.casefold() in folded), "")


def _why(symptom: str, mode: str) -> str:
    if symptom in LOOPBACK_REFUSED:
        return LOOPBACK_WHY
    if symptom in NO_NETWORK:
        return "the sandbox has no network"
    if symptom in READ_ONLY:
        return "it may write nothing in the sandbox" if mode == "read-only" else "it may write only in the workspace"
    return "the sandbox forbids it"


def sandbox_note(mode: str, symptom: str) -> str:
    """The line the model reads after a sandboxed command failed with `symptom` (none: "")."""
    if not symptom:
        return ""
    where = "nothing is writable" if mode == "read-only" else "only the workspace is writable"
    network = "there is no network"
    if symptom in LOOPBACK_REFUSED:
        network += " (servers on this machine's localhost are not reachable from it)"
    return (
        f"[cairn] This command ran unasked in cairn's sandbox: {where} (/tmp is private), {network}, "
        f"and the user's secrets are hidden. If that is why it failed, call it again with "
        f"outsideSandbox: true to ask the user to run it outside."
    )


class SandboxFailures:
    """A session's last sandboxed failure per command (the terminal tool owns one), so the
    question to run it outside can say why: "Its sandboxed run failed: …"."""

    def __init__(self, limit: int = REMEMBERED_FAILURES) -> None:
        self.limit = limit
        self._reasons: OrderedDict[str, str] = OrderedDict()

    def record(self, command: str, mode: str, symptom: str) -> None:
        """The sandboxed run of `command` ended: failed with `symptom`, or ("") not so."""
        self._reasons.pop(command, None)
        if not symptom:
            return
        self._reasons[command] = f"Its sandboxed run failed: {symptom} ({_why(symptom, mode)})."
        while len(self._reasons) > self.limit:
            self._reasons.popitem(last=False)

    def reason(self, command: str) -> str:
        """Why asking to run `command` outside makes sense, in one line; "" if cairn saw none."""
        return self._reasons.get(command, "")
