"""Which programs, with which options, only read (agent/tools/permissions.py runs them unasked).

Each read-only program lists the options that cannot write, run other programs or reach
the network; anything else (an unknown option, an abbreviation, a subcommand that writes)
makes the command ask. `read_only` answers for one parsed simple command
(agent/tools/shell_parse.py) and names the words that may be paths, for the workspace
check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Spec:
    """The options of a program that only read. Anything not listed makes it ask."""

    flags: str = ""  # short options without a value
    valued: str = ""  # short options with a value (attached, or the next word)
    long: frozenset[str] = frozenset()  # long options (`--name` or `--name=value`)
    long_valued: frozenset[str] = frozenset()  # long options whose value may be the next word
    numeric: bool = False  # `-5` (a count)
    any_option: bool = False  # every word is fine (echo)
    paths: bool = True  # its other words may name files
    max_positional: int | None = None
    extra: frozenset[str] = field(default_factory=frozenset)  # whole words allowed as options (find)


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HEAD = Spec(
    flags="qvz",
    valued="nc",
    numeric=True,
    long=_s("quiet silent verbose zero-terminated"),
    long_valued=_s("lines bytes"),
)
_GIT_DIFF_LONG = _s(
    "stat numstat shortstat name-only name-status cached staged patch no-patch raw minimal patience "
    "histogram color no-color word-diff color-words check summary compact-summary ignore-all-space "
    "ignore-space-change ignore-space-at-eol ignore-blank-lines ignore-cr-at-eol no-ext-diff no-textconv "
    "find-renames find-copies no-renames relative exit-code quiet full-index binary abbrev dirstat "
    "diff-filter unified stat-width src-prefix dst-prefix no-prefix merge-base text function-context "
    "ita-visible-in-index indent-heuristic no-indent-heuristic anchored diff-algorithm"
)
_GIT_LOG_LONG = _GIT_DIFF_LONG | _s(
    "oneline graph decorate no-decorate all branches tags remotes author committer since until after "
    "before grep format pretty abbrev-commit no-merges merges first-parent reverse follow date "
    "max-count skip left-right cherry-pick cherry-mark topo-order date-order author-date-order "
    "regexp-ignore-case all-match invert-grep no-walk walk-reflogs source simplify-by-decoration "
    "ancestry-path boundary count log-size notes no-notes mailmap use-mailmap "
    "full-diff expand-tabs no-expand-tabs encoding min-parents max-parents show-pulls"
)
# Not listed though they only read: `--show-signature` runs the repository's gpg.program,
# `--submodule=diff` runs git in each submodule (whose own filters the hardening cannot see),
# `git status -v` runs the repository's textconv drivers (status has no `--no-textconv`).
_GIT = {
    "status": Spec(
        flags="sbuz",
        long=_s(
            "short branch porcelain long untracked-files ignored column no-column "
            "ahead-behind no-ahead-behind renames no-renames find-renames show-stash null"
        ),
    ),
    "diff": Spec(flags="puzRabwBMCDs", valued="U", long=_GIT_DIFF_LONG),
    "log": Spec(
        flags="pzuwbiEFPMCrst",
        valued="nUSGL",
        numeric=True,
        long=_GIT_LOG_LONG,
        long_valued=_s("author committer since until after before grep max-count skip date format pretty"),
    ),
    "show": Spec(flags="pzuwbsM", valued="U", numeric=True, long=_GIT_LOG_LONG),
    "branch": Spec(
        flags="arvli",
        long=_s(
            "all remotes verbose list contains no-contains merged no-merged points-at sort format "
            "show-current color no-color column no-column ignore-case abbrev no-abbrev omit-empty"
        ),
    ),
    "rev-parse": Spec(
        flags="q",
        long=_s(
            "show-toplevel abbrev-ref short verify quiet git-dir git-common-dir is-inside-work-tree "
            "is-inside-git-dir is-bare-repository is-shallow-repository show-prefix show-cdup "
            "symbolic symbolic-full-name absolute-git-dir show-superproject-working-tree all branches "
            "tags remotes default revs-only no-revs flags no-flags sq-quote local-env-vars"
        ),
    ),
}
READ_ONLY: dict[str, Spec] = {
    "ls": Spec(
        flags="1aAbBcCdfFgGhHiklmnNopqQrRsStuUvxXZ",
        valued="ITw",
        long=_s(
            "all almost-all author escape block-size ignore-backups color classify file-type format full-time "
            "group-directories-first no-group human-readable si dereference-command-line hide hyperlink "
            "indicator-style inode ignore kibibytes literal numeric-uid-gid hide-control-chars "
            "show-control-chars quote-name quoting-style reverse recursive size sort time time-style tabsize "
            "width context zero directory"
        ),
        long_valued=_s("ignore hide sort time format width"),
    ),
    "cat": Spec(
        flags="AbeEnstTuv",
        long=_s("show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting"),
    ),
    "head": _HEAD,
    "tail": _HEAD,
    "wc": Spec(flags="clmwL", long=_s("bytes chars lines words max-line-length total")),
    "grep": Spec(
        flags="EFGPiyvwxcLlonhHbsqraIUzZT",
        valued="efmABC",
        long=_s(
            "extended-regexp fixed-strings basic-regexp perl-regexp regexp file ignore-case no-ignore-case "
            "word-regexp line-regexp no-messages invert-match count color colour files-with-matches "
            "files-without-match max-count only-matching quiet silent byte-offset with-filename no-filename "
            "label line-number initial-tab null null-data after-context before-context context text "
            "binary-files include exclude exclude-dir exclude-from recursive binary"
        ),
        long_valued=_s("regexp file max-count after-context before-context context include exclude exclude-dir label"),
    ),
    "rg": Spec(
        flags="iIsSwxvnNlcoqaFHpPUu0.b",
        valued="eftgTABCmMjEdr",
        long=_s(
            "files type-list json hidden no-ignore no-ignore-vcs no-ignore-parent no-ignore-global glob iglob "
            "type type-not max-count max-depth context after-context before-context ignore-case smart-case "
            "case-sensitive word-regexp line-regexp invert-match line-number no-line-number files-with-matches "
            "files-without-match count count-matches only-matching quiet fixed-strings regexp file replace "
            "color colors column no-column heading no-heading with-filename no-filename vimgrep sort sortr "
            "stats multiline multiline-dotall pcre2 engine text binary trim max-columns max-filesize "
            "no-messages null passthru unrestricted one-file-system encoding no-config debug byte-offset "
            "ignore-file no-unicode crlf null-data pretty"
        ),
        long_valued=_s(
            "glob iglob type type-not max-count max-depth context after-context before-context "
            "regexp file replace color colors sort sortr engine max-columns max-filesize "
            "encoding ignore-file"
        ),
    ),
    "find": Spec(
        flags="HP",
        valued="DO",
        extra=_s(
            "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype "
            "-maxdepth -mindepth -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -size -perm "
            "-user -group -uid -gid -links -inum -samefile -empty -print -print0 -printf -prune -quit "
            "-depth -mount -xdev -noleaf -true -false -readable -writable -executable -nouser -nogroup "
            "-not -a -o -and -or -ls -daystart -ignore_readdir_race ! ( ) ,"
        ),
    ),
    "pwd": Spec(flags="LP", max_positional=0),
    "which": Spec(flags="a", paths=False),
    "echo": Spec(any_option=True, paths=False),
    "true": Spec(any_option=True, paths=False),
    "basename": Spec(flags="az", valued="s", long=_s("multiple suffix zero"), paths=False),
    "dirname": Spec(flags="z", long=_s("zero"), paths=False),
    "file": Spec(
        flags="bhiLNknpr0E",
        valued="Fe",
        long=_s(
            "brief mime mime-type mime-encoding dereference no-dereference keep-going raw extension print0 "
            "no-pad no-buffer separator exclude"
        ),
    ),
    "stat": Spec(
        flags="LftZ",
        valued="c",
        long=_s("dereference file-system terse format printf cached"),
        long_valued=_s("format printf"),
    ),
    "du": Spec(
        flags="0abcDhHklmsSx",
        valued="dBtX",
        long=_s(
            "null all apparent-size block-size bytes total dereference-args max-depth human-readable inodes "
            "count-links separate-dirs si summarize threshold time time-style exclude exclude-from "
            "one-file-system"
        ),
        long_valued=_s("max-depth exclude exclude-from"),
    ),
    "tree": Spec(
        flags="adfixpugshDFqNQrtvUcSnCJXA",
        valued="LIP",
        long=_s(
            "noreport dirsfirst filesfirst gitignore charset filelimit du si prune matchdirs ignore-case "
            "inodes device sort timefmt"
        ),
        long_valued=_s("charset filelimit sort timefmt"),
    ),
    "sort": Spec(
        flags="bdfgiMhnRrVcCmsuz",
        valued="ktS",
        long=_s(
            "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting "
            "month-sort human-numeric-sort numeric-sort random-sort reverse version-sort check merge stable "
            "unique zero-terminated key field-separator buffer-size sort parallel debug"
        ),
        long_valued=_s("key field-separator buffer-size sort parallel"),
    ),
    "uniq": Spec(
        flags="cdDiuz",
        valued="fsw",
        long=_s(
            "count repeated all-repeated ignore-case unique zero-terminated skip-fields skip-chars check-chars group"
        ),
        long_valued=_s("skip-fields skip-chars check-chars"),
        max_positional=1,
    ),
    "cut": Spec(
        flags="nsz",
        valued="bcdf",
        long=_s("bytes characters delimiter fields complement only-delimited output-delimiter zero-terminated"),
        long_valued=_s("bytes characters delimiter fields output-delimiter"),
    ),
    "cd": Spec(max_positional=1),  # the caller follows the folder for the commands after it
    "set": Spec(any_option=True, paths=False),  # only SAFE_SET_FLAGS get this far
}
GIT_GLOBAL_OPTIONS = {"--no-pager"}
# `git log --pretty=NAME` names that are git's own; any other name is a `pretty.NAME` alias
# of the repository's config, whose format may check signatures.
GIT_PRETTY_NAMES = frozenset(_s("oneline short medium full fuller reference email mboxrd raw"))
# Options whose value is a commit format (`log`/`show`) or a ref-filter format (`branch`).
_GIT_FORMAT_OPTIONS = ("--format", "--pretty")
_GIT_REF_FORMAT_OPTIONS = ("--format", "--sort")
# Format placeholders that verify a signature, so run gpg.program: `%G?`, `%GG`, `%GS`, `%GK`,
# `%GF`, `%GP`, `%GT`, also as `%+G?`, `%-GG`, `% GS` (git's line-feed/space modifiers).
_SIGNATURE_PLACEHOLDER = re.compile(r"%[+\- ]?G")


def git_format_problem(sub: str, args: list[str]) -> str:
    """Why a `git log`/`show`/`branch` format may check a signature (so run the repository's
    gpg program); "" when it cannot. Values come as `--format=V`, `--pretty=V` or the next word."""
    options = _GIT_FORMAT_OPTIONS if sub in ("log", "show") else _GIT_REF_FORMAT_OPTIONS if sub == "branch" else ()
    for i, word in enumerate(args):
        name, eq, value = word.partition("=")
        if name not in options:
            continue
        values = [value] if eq else args[i + 1 : i + 2]
        for v in values:
            if sub == "branch":
                if "signature" in v.lower():
                    return f"git {sub} {name} with %(signature) checks signatures"
                continue
            if _SIGNATURE_PLACEHOLDER.search(v.replace("%%", "")):
                return f"git {sub} {name} with a %G placeholder checks signatures"
            literal = "%" in v or v.startswith(("format:", "tformat:"))
            if eq and not literal and v.lower() not in GIT_PRETTY_NAMES:  # git takes a prefix of a name too
                return f"git {sub} {name}={v} may name a format of the repository's config"
    return ""


def read_only(words: tuple[str, ...]) -> tuple[str, list[str]]:
    """("", words that may name files) when the command only reads; else (why not, [])."""
    name, args = words[0], list(words[1:])
    if name == "git":
        while args and args[0] in GIT_GLOBAL_OPTIONS:
            args.pop(0)
        sub = args.pop(0) if args else ""
        spec = _GIT.get(sub)
        if spec is None:
            return f"git {sub or '(no subcommand)'} is not known to only read", []
        why, paths, positional = _check_options(f"git {sub}", spec, args)
        why = why or git_format_problem(sub, args)
        if not why and sub == "branch" and positional and not {"--list", "-l"} & set(args):
            why = "git branch with a name creates a branch"
        # `HEAD:path` names a file too.
        paths += [p.split(":", 1)[1] for p in paths if ":" in p]
        return why, ([] if why else paths)
    spec = READ_ONLY.get(name)
    if spec is None:
        return f"{name} is not known to only read", []
    why, paths, _ = _check_options(name, spec, args)
    return why, ([] if why or not spec.paths else paths)


def _check_options(prog: str, spec: Spec, args: list[str]) -> tuple[str, list[str], list[str]]:
    """Every option must be on the program's list; returns (why not, possible paths, positionals)."""
    paths: list[str] = []
    positional: list[str] = []
    i, options_done = 0, spec.any_option
    while i < len(args):
        w = args[i]
        i += 1
        if options_done or not w.startswith("-") or w == "-":
            if w in spec.extra and not options_done:
                continue  # find's `!`, `(` …
            positional.append(w)
            paths.extend(_word_paths(w))
            continue
        if w == "--":
            options_done = True
            continue
        if len(w) > 256:
            return f"{prog} has an option too long to check", [], []
        if w in spec.extra:
            continue  # a find primary; its value follows as a plain word, checked like a path
        if spec.numeric and w[1:].isdigit():
            continue
        # Options may glue a value: anything after `=`, or from a `/` or `.` on, may be a path.
        paths.extend(w[k:] for k in range(2, len(w)) if w[k] in "/." or w[k - 1] == "=")
        if w.startswith("--"):
            name, eq, _ = w[2:].partition("=")
            if name not in spec.long:
                return f"{prog} {w.split('=')[0]} is not known to only read", [], []
            if not eq and name in spec.long_valued and i < len(args):
                paths.append(args[i])
                i += not args[i].startswith("-")  # a value like an option is checked as one too
            continue
        for k, letter in enumerate(w[1:], start=1):
            if letter in spec.flags:
                continue
            if letter in spec.valued:
                if k == len(w) - 1 and i < len(args):
                    paths.append(args[i])
                    i += not args[i].startswith("-")  # a value like an option is checked as one too
                else:
                    paths.append(w[k + 1 :])
                break
            return f"{prog} -{letter} is not known to only read", [], []
    if spec.max_positional is not None and len(positional) > spec.max_positional:
        return f"{prog} with {len(positional)} operands may write", [], []
    return "", paths, positional


def option_paths(words: tuple[str, ...]) -> list[str]:
    """Words of any command that may name files: operands, and what options glue on."""
    out: list[str] = []
    for w in words[1:]:
        if not w.startswith("-") or w == "-":
            out.extend(_word_paths(w))
        else:
            out.extend(w[k:] for k in range(2, len(w)) if w[k] in "/." or w[k - 1] == "=")
    return out


def _word_paths(word: str) -> list[str]:
    """An operand, and for `NAME=VALUE` (`-o cache_dir=/elsewhere`, `make DESTDIR=/x`) its VALUE:
    checked as one relative path, `cache_dir=/x` would never count as outside."""
    name, eq, value = word.partition("=")
    return [word, value] if eq and name else [word]
