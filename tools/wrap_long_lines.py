"""Brings Python files to pyproject.toml's 100 columns (ruff's E501) without changing what the code
does."""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import json
import re
import subprocess
import sys
import tokenize
import unicodedata
from pathlib import Path

LIMIT = 100
ROOT = Path(__file__).resolve().parent.parent
NOQA = re.compile(r"#\s*noqa\b", re.I)
PRAGMA = re.compile(r"#\s*(noqa|type:|pragma|fmt:|pyright:|pylint:|nosec|mypy:|isort:|ruff:)", re.I)
BULLET = re.compile(r"([-*+]|\d+[.)])\s+")
# lines of a docstring never reflowed: lists, tables, doctests, headings' underlines, fields
UNFLOWED = re.compile(r"([-*+|>]|\d+[.)]|:\w|\.\. |```|[=~^]+$)")
VIEW_METHODS = {"get", "post", "put", "patch", "delete", "head", "options"}
VIEW_DECORATORS = re.compile(r"\.(route|response|arguments|doc|paginate|alt_response)\b")


def width(text: str) -> int:
    """Columns as ruff counts them: East Asian wide and full-width characters take two."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def overlong(line: str) -> bool:
    """What ruff's E501 reports (a single word, or a URL that starts before the limit, is not)."""
    if width(line) <= LIMIT:
        return False
    chunks = line.split()
    if len(chunks) == 1:
        return False
    last = chunks[-1]
    if "://" in last and width(line) - width(last) < LIMIT:
        return False
    pragma = re.search(r"\s" + PRAGMA.pattern, line, re.I)
    if pragma and width(line[: pragma.start()].rstrip()) <= LIMIT:
        return False
    return True


def tokens_of(source: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


def line_starts_ok(tokens, line_count: int) -> list[bool]:
    """ok[n]: a new line may be put before line n (1-based) — no string spans into it, no backslash
    before it."""
    ok = [False] * (line_count + 2)
    ok[1] = True
    for token in tokens:
        if token.type in (tokenize.NL, tokenize.NEWLINE):
            ok[token.start[0] + 1] = True
    return ok


def break_words(prefix: str, words: list[str], carry_prefix: str) -> tuple[str, list[str]]:
    """The longest head of words that fits after prefix (at least one word), and the words left
    over."""
    taken = 1
    while taken < len(words) and width(prefix + " ".join(words[: taken + 1])) <= LIMIT:
        taken += 1
    return prefix + " ".join(words[:taken]), words[taken:]


# ---- step: comments ----------------------------------------------------------------------------


def move_trailing_comments(source: str, only_if_code_fits: bool) -> str:
    """A comment after code that makes its line too long goes on its own line above the statement's
    line."""
    lines = source.splitlines(keepends=True)
    tokens = tokens_of(source)
    ok = line_starts_ok(tokens, len(lines))
    moves = {}
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        row, col = token.start
        line = lines[row - 1].rstrip("\r\n")
        code = line[:col].rstrip()
        if not code or not overlong(line) or PRAGMA.match(token.string) or "noqa" in token.string:
            continue
        if only_if_code_fits and width(code) > LIMIT:
            continue
        target = row
        while not ok[target]:
            target -= 1
        moves[row] = (target, code, token.string)
    for row, (target, code, comment) in sorted(moves.items(), reverse=True):
        ending = lines[row - 1][len(lines[row - 1].rstrip("\r\n")) :]
        lines[row - 1] = code + ending
        indent = re.match(r"\s*", lines[target - 1]).group()
        text = comment[1:].strip()
        lines.insert(target - 1, f"{indent}# {text}\n")
    return "".join(lines)


def wrap_comments(source: str) -> str:
    """A long comment of its own line is broken at spaces; what is left over joins the block's next
    line when that continues the same paragraph, or goes on a new line."""
    lines = source.splitlines(keepends=True)
    tokens = tokens_of(source)
    full = {}
    for token in tokens:
        if (
            token.type == tokenize.COMMENT
            and not lines[token.start[0] - 1][: token.start[1]].strip()
        ):
            full[token.start[0]] = token.start[1]
    out = []
    row = 1
    while row <= len(lines):
        line = lines[row - 1]
        text = line.rstrip("\r\n")
        if (
            row not in full
            or not overlong(text)
            or PRAGMA.match(text.strip())
            or text.lstrip().startswith("#!")
        ):
            out.append(line)
            row += 1
            continue
        rule = re.match(r"(\s*#+ ?)([-=#*~_])\2+$", text)
        if rule:  # a ruler (# -----) is cut to the limit
            out.append(text[: LIMIT - width(text) + len(text)] + line[len(text) :])
            row += 1
            continue
        match = re.match(r"(\s*)(#+)( ?)(\s*)(.*)$", text)
        indent, hashes, _, sub, body = match.groups()
        bullet = BULLET.match(body)
        first_prefix = f"{indent}{hashes} {sub}"
        carry_prefix = first_prefix + (" " * bullet.end() if bullet else "")
        words = body.split()
        head, rest = break_words(first_prefix, words, carry_prefix)
        out.append(head + "\n")
        row += 1
        while rest:
            following = lines[row - 1].rstrip("\r\n") if row <= len(lines) else ""
            continuation = (
                row in full
                and following.startswith(carry_prefix)
                and following[len(carry_prefix) :][:1] not in ("", " ")
            )
            if continuation:
                more = following[len(carry_prefix) :]
                if (
                    BULLET.match(more)
                    or PRAGMA.match(following.strip())
                    or re.match(r"#+\s*---", following.strip())
                ):
                    continuation = False
            if continuation:
                rest = rest + more.split()
                row += 1
            head, rest = break_words(carry_prefix, rest, carry_prefix)
            out.append(head + "\n")
    return "".join(out)


# ---- step: docstrings --------------------------------------------------------------------------


def docstring_nodes(tree) -> dict[tuple[int, int], bool]:
    """(line, column) of each docstring -> whether its first paragraph may be an OpenAPI summary (a
    view's)."""
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            summary = False
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                summary = node.name in VIEW_METHODS or any(
                    VIEW_DECORATORS.search(ast.unparse(decorator))
                    for decorator in node.decorator_list
                )
            found[(body[0].value.lineno, body[0].value.col_offset)] = summary
    return found


def _doc_line_kind(line: str, base: int, hang: int | None) -> tuple[str | None, int | None]:
    """How a docstring line may be reflowed: (its continuation lines' prefix or None when it is kept
    as it is, the hanging indentation of the list item it belongs to)."""
    stripped = line.strip()
    indent = len(line) - len(line.lstrip())
    if not stripped or stripped in ('"""', "'''") or "  " in stripped:
        return None, hang if stripped else hang
    bullet = BULLET.match(stripped)
    if bullet and indent >= base:
        return " " * (indent + bullet.end()), indent + bullet.end()
    if UNFLOWED.match(stripped):
        return None, hang
    if indent == base:
        return " " * indent, None
    if hang is not None and indent == hang:
        return " " * indent, hang
    return None, (hang if hang is not None and indent > hang else None)


def wrap_docstrings(source: str, residue: list) -> str:
    """Long lines of docstrings are broken at spaces; what is left over joins the next line of the
    same paragraph or list item, or goes on a new line. Indented blocks, tables, doctests and a line
    with two spaces in a row are kept. A view's whole first paragraph (flask-smorest's summary) is
    never touched."""
    tree = ast.parse(source)
    docs = docstring_nodes(tree)
    lines = source.splitlines(keepends=True)
    edits = {}
    for token in tokens_of(source):
        if token.type != tokenize.STRING or token.start not in docs:
            continue
        first, last = token.start[0], token.end[0]
        raw = "r" in token.string[:3].lower()
        doc_lines = [lines[n - 1].rstrip("\r\n") for n in range(first, last + 1)]
        if not any(overlong(line) for line in doc_lines):
            continue
        statement = doc_lines[0][: len(doc_lines[0]) - len(doc_lines[0].lstrip())]
        body_lines = [line for line in doc_lines[1:] if line.strip()]
        base = min((len(line) - len(line.lstrip()) for line in body_lines), default=token.start[1])
        if docs[token.start]:
            protected = 1
            while protected < len(doc_lines) and doc_lines[protected].strip() not in (
                "",
                '"""',
                "'''",
            ):
                protected += 1
        else:
            protected = 0 if token.start[1] == len(statement) else 1
        new = doc_lines[:protected]
        index = protected
        hang = None
        while index < len(doc_lines):
            line = doc_lines[index]
            index += 1
            if index == 1:
                carry = " " * base if "  " not in line.strip() else None
            else:
                carry, hang = _doc_line_kind(line, base, hang)
            if not overlong(line) or carry is None:
                new.append(line)
                continue
            head, rest = _break_doc(
                line[: len(line) - len(line.lstrip())], line.strip().split(" "), raw
            )
            new.append(head)
            while rest:
                if index < len(doc_lines):
                    following = doc_lines[index]
                    following_carry, _ = _doc_line_kind(following, base, hang)
                    indent = len(following) - len(following.lstrip())
                    bullet = BULLET.match(following.strip())
                    if following_carry is not None and indent == len(carry) and not bullet:
                        rest = rest + following.strip().split(" ")
                        index += 1
                head, rest = _break_doc(carry, rest, raw)
                new.append(head)
        after = (
            new[-1][token.end[1] :]
            if len(new) == len(doc_lines) or token.start[0] != token.end[0]
            else ""
        )
        if (
            docs[token.start]
            and any(overlong(line) for line in new[:protected])
            and not after.strip()
            and not NOQA.search(new[-1])
        ):
            # a view's summary is the OpenAPI document's: kept as it is, with ruff told (the noqa of
            # a string's last line covers all its lines)
            new[-1] = new[-1].rstrip() + "  # noqa: E501"
        if new != doc_lines:
            edits[first] = (last, new)
    for first, (last, new) in sorted(edits.items(), reverse=True):
        ending = lines[last - 1][len(lines[last - 1].rstrip("\r\n")) :]
        lines[first - 1 : last] = [line + "\n" for line in new[:-1]] + [new[-1] + ending]
    return "".join(lines)


def _break_doc(prefix: str, words: list[str], raw: bool) -> tuple[str, list[str]]:
    """break_words, never after a word ending in a backslash (in a docstring that is not raw, a
    newline after one would be an escaped newline)."""
    taken = 1
    candidate = 1
    while candidate < len(words):
        candidate += 1
        if width(prefix + " ".join(words[:candidate])) > LIMIT:
            break
        if raw or not words[candidate - 1].endswith("\\"):
            taken = candidate
    while taken < len(words) and not raw and words[taken - 1].endswith("\\"):
        taken += 1
    return prefix + " ".join(words[:taken]), words[taken:]


# ---- step: string literals ---------------------------------------------------------------------


def split_points(prefix: str, body: str) -> list[int]:
    """Offsets in a string's body where it may be cut in two: after a space, outside f-string
    placeholders."""
    points = []
    depth = 0
    index = 0
    fstring = "f" in prefix.lower()
    while index < len(body):
        char = body[index]
        if fstring and char in "{}":
            if depth == 0 and body[index : index + 2] in ("{{", "}}"):
                index += 2
                continue
            if char == "{" and depth == 0 and index:
                points.append(index)
            depth += 1 if char == "{" else -1
            if depth == 0 and index + 1 < len(body):
                points.append(index + 1)
        elif char == "\\" and "r" not in prefix.lower():
            index += 2
            continue
        index += 1
        if depth == 0 and char == " " and index < len(body) and body[index] != " ":
            points.append(index)
    return sorted(set(points))


def literal_piece(prefix: str, quote: str, text: str) -> str:
    """One piece of a split string; an f-string piece without a placeholder loses its f (ruff's
    F541)."""
    if "f" in prefix.lower() and not re.search(r"(?<!\{)\{(?!\{)|\{\{\{", text.replace("{{", "")):
        prefix = prefix.replace("f", "").replace("F", "")
        text = text.replace("{{", "{").replace("}}", "}")
    return f"{prefix}{quote}{text}{quote}"


def split_strings(source: str) -> str:
    """A long one-line string literal (not a docstring) on an overlong line is cut at spaces into
    implicitly concatenated pieces, one a line; one outside brackets is put in parentheses."""
    tree = ast.parse(source)
    docs = docstring_nodes(tree)
    annotations = set()
    for node in ast.walk(tree):
        for annotation in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if annotation is not None:
                for inner in ast.walk(annotation):
                    annotations.add((getattr(inner, "lineno", 0), getattr(inner, "col_offset", 0)))
    lines = source.splitlines(keepends=True)
    depth = 0
    edits = []
    for token in tokens_of(source):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        if (
            token.type != tokenize.STRING
            or token.start[0] != token.end[0]
            or token.start in docs
            or token.start in annotations
        ):
            continue
        line = lines[token.start[0] - 1].rstrip("\r\n")
        if not overlong(line) or line.lstrip().startswith("case "):
            continue
        match = re.match(r"([A-Za-z]*)('''|\"\"\"|'|\")", token.string)
        prefix, quote = match.groups()
        if len(quote) == 3:
            continue
        body = token.string[len(prefix) + 1 : -1]
        column = token.start[1] + (0 if depth else 1)
        budget = LIMIT - width(line[: token.start[1]]) - len(prefix) - 2 - (0 if depth else 1)
        budget_next = LIMIT - column - len(prefix) - 2 - 1
        points = split_points(prefix, body)
        pieces, start = [], 0
        limit = budget
        for point, following in zip(points, points[1:] + [len(body)]):
            if (
                width(body[start:following]) > limit
                and width(body[start:point]) <= limit
                and point > start
            ):
                pieces.append(body[start:point])
                start = point
                limit = budget_next
        if not pieces:
            # no cut leaves a first piece that fits: cut at the first point anyway if one exists
            if not points:
                continue
            pieces.append(body[: points[0]])
            start = points[0]
        pieces.append(body[start:])
        joined = ("\n" + " " * column).join(literal_piece(prefix, quote, piece) for piece in pieces)
        if not depth:
            joined = "(" + joined + ")"
        edits.append((token.start, token.end, joined))
    for (row, col), (_, end_col), text in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[end_col:]
    return "".join(lines)


# ---- the run -----------------------------------------------------------------------------------


def ruff_format(paths: list[str]) -> None:
    """ruff format (pyproject.toml's settings), then each displaced `# noqa` back where ruff check
    wants it."""
    subprocess.run([ruff_binary(), "format", "--quiet", *paths], check=True, cwd=ROOT)
    put_noqa_back(paths)


def ruff_binary() -> str:
    ruff = Path(sys.executable).parent / "ruff"
    return str(ruff) if ruff.exists() else "ruff"


def put_noqa_back(paths: list[str]) -> None:
    """ruff format can leave a `# noqa` on another line of the statement it split than the one ruff
    check reports: each violation that has no noqa now (the code passed ruff check before) takes the
    nearest `# noqa` naming its rule, onto the reported line."""
    checked = subprocess.run(
        [
            ruff_binary(),
            "check",
            "--quiet",
            "--output-format",
            "json",
            "--extend-ignore",
            "E501",
            *paths,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    by_file: dict[str, list] = {}
    for violation in json.loads(checked.stdout or "[]"):
        by_file.setdefault(violation["filename"], []).append(
            (violation["location"]["row"], violation["code"])
        )
    for filename, violations in by_file.items():
        file = Path(filename)
        source = file.read_text()
        lines = source.splitlines(keepends=True)
        comments = {
            token.start[0]: token.string
            for token in tokens_of(source)
            if token.type == tokenize.COMMENT and NOQA.match(token.string)
        }
        spans = [
            (node.lineno, node.end_lineno)
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.stmt)
        ]
        placed: set[int] = set()
        for row, code in violations:
            around = min(
                (span for span in spans if span[0] <= row <= span[1]),
                key=lambda span: span[1] - span[0],
            )
            candidates = [
                line
                for line, comment in comments.items()
                if line != row
                and around[0] <= line <= around[1]
                and (code in comment or ":" not in comment)
            ]
            if not candidates or row in comments:
                print(f"{filename}:{row}: {code} (no # noqa to move here)", file=sys.stderr)
                continue
            # one put in place already serves its line: the next violation gets a copy of it
            movable = [line for line in candidates if line not in placed]
            source_row = min(movable or candidates, key=lambda line: abs(line - row))
            comment = comments[source_row]
            if movable:
                del comments[source_row]
                old = lines[source_row - 1]
                body = old.rstrip("\r\n")
                assert body.endswith(comment)
                lines[source_row - 1] = body[: -len(comment)].rstrip() + old[len(body) :]
            target = lines[row - 1]
            body = target.rstrip("\r\n")
            lines[row - 1] = f"{body}  {comment}" + target[len(body) :]
            comments[row] = comment
            placed.add(row)
        file.write_text("".join(lines))


def count_overlong(paths) -> int:
    return sum(
        overlong(line) for path in paths for line in Path(ROOT, path).read_text().splitlines()
    )


def tracked_python_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [path for path in listed.stdout.split("\0") if path and Path(ROOT, path).is_file()]


def apply(paths: list[str], step, *args) -> None:
    for path in paths:
        file = Path(ROOT, path)
        before = file.read_text()
        if not any(overlong(line) for line in before.splitlines()):
            continue
        after = step(before, *args)
        if after != before:
            # a step never writes a file that does not parse
            compile(after, path, "exec", dont_inherit=True)
            file.write_text(after)


def run(paths: list[str]) -> int:
    """The steps in turn, then again on what is still too long until a round changes nothing; prints
    the lines each step fixed (stderr) and the ones left (stdout, path:line)."""
    fixed: dict[str, int] = {}

    def step(name, action, *args):
        before = count_overlong(paths)
        action(*args)
        fixed[name] = fixed.get(name, 0) + before - count_overlong(paths)

    start = count_overlong(paths)
    step("trailing comments moved before ruff format", apply, paths, move_trailing_comments, True)
    step("ruff format", ruff_format, paths)
    for _ in range(5):
        previous = count_overlong(paths)
        step("trailing comments moved", apply, paths, move_trailing_comments, False)
        step("comments wrapped", apply, paths, wrap_comments)
        step("docstrings wrapped", apply, paths, wrap_docstrings, [])
        step(
            "strings split (and ruff format)",
            lambda: (apply(paths, split_strings), ruff_format(paths)),
        )
        if count_overlong(paths) == previous:
            break
    print(f"{start} overlong lines at the start", file=sys.stderr)
    for name, count in fixed.items():
        print(f"{count:6} fixed by {name}", file=sys.stderr)
    left = [
        f"{path}:{number}: {width(line)} columns"
        for path in paths
        for number, line in enumerate(Path(ROOT, path).read_text().splitlines(), 1)
        if overlong(line)
    ]
    print(f"{len(left)} left", file=sys.stderr)
    print("\n".join(left))
    return 0


# ---- --verify ----------------------------------------------------------------------------------


def normalized_dump(source: str, path: str) -> tuple[str, list[str]]:
    """ast.dump with each docstring's whitespace collapsed, and the first paragraph of each view's
    docstring (flask-smorest's summary, line breaks included)."""
    tree = ast.parse(source, path)
    summaries = []
    views = docstring_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and (node.value.lineno, node.value.col_offset) in views:
            value = node.value.value
            if views[(node.value.lineno, node.value.col_offset)]:
                summaries.append(inspect.cleandoc(value).split("\n\n")[0])
            node.value.value = " ".join(value.split())
    return ast.dump(tree), summaries


def verify(paths: list[str], revision: str) -> int:
    failures = 0
    for path in paths:
        shown = subprocess.run(
            ["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, text=True
        )
        if shown.returncode:
            continue
        try:
            before = normalized_dump(shown.stdout, path)
        except SyntaxError:
            continue
        after = normalized_dump(Path(ROOT, path).read_text(), path)
        if before[0] != after[0]:
            print(f"{path}: the syntax tree differs from {revision}'s")
            failures += 1
        elif before[1] != after[1]:
            print(f"{path}: a view's docstring's first paragraph differs from {revision}'s")
            failures += 1
    print(f"verified {len(paths)} files against {revision}: {failures} differ", file=sys.stderr)
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "paths", nargs="*", help="files to rewrite (default: the .py files git tracks)"
    )
    parser.add_argument(
        "--verify", metavar="REVISION", help="only compare each file's syntax tree with REVISION's"
    )
    args = parser.parse_args(argv)
    paths = args.paths or tracked_python_files()
    if args.verify:
        return verify(paths, args.verify)
    return run(paths)


if __name__ == "__main__":
    sys.exit(main())
