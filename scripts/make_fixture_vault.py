"""Write tests/data/vault: the fixture vault of tests/test_tag_command.py and
tests/test_notes_vault.py (notes in the shapes people keep, bodies from
examples/ and benchmarks/). Run once; the files are committed. The symlink, the read-only
note and the huge note are made by the tests."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "vault"


def body(name: str, chars: int = 700) -> str:
    path = next(p for p in (ROOT / "examples" / name, ROOT / "benchmarks" / name) if p.exists())
    text = path.read_text(encoding="utf-8").strip()
    if len(text) > chars:
        text = text[:chars].rsplit(". ", 1)[0] + "."
    return text


def write(rel: str, text: str | bytes, newline: str = "\n") -> None:
    p = OUT / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.replace("\n", newline).encode("utf-8")
    p.write_bytes(text)


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    if OUT.exists():
        shutil.rmtree(OUT)
    ferry = (ROOT / "tests" / "data" / "ferry.txt").read_text(encoding="utf-8").strip()
    write("no-front-matter.md", f"# Ferry repairs\n\n{ferry}\n")
    write("empty-front-matter.md", f"---\n---\n{body('more/bridge.txt')}\n")
    write(
        "comments.md",
        "---\n# written by hand\ntitle: Bakery opening   # working title\ncreated: 2024-02-11\n"
        "tags:\n  - food    # mine\n  - town\n# end of my keys\nrating: 4\n---\n"
        f"{body('docs/bakery.txt')}\n",
    )
    write("block-tags.md", f"---\ntags:\n  - weather\n  - summer\n---\n{body('more/heatwave.txt')}\n")
    write(
        "flow-tags.md", f"---\ntitle: Market day\ntags: [market,  local ]\n---\n{body('more/market.txt')}\n"
    )
    write("scalar-tags.md", f"---\ntags: chess\nauthor: Sam\n---\n{body('more/chess.txt')}\n")
    write(
        "hash-tags.md",
        f'---\ntags: ["#bees", "#garden"]\n---\n{body("more/bees.txt")}\n',
    )
    write(
        "nested-tags.md",
        f"---\ntags:\n  - area/transport\n  - project/2025-q1\n---\n{body('more/tram.txt')}\n",
    )
    write(
        "properties.md",
        "---\naliases:\n  - River report\n  - Flood note\ncssclasses: [wide]\ncreated: 2024-03-01T09:30:00\n"
        "publish: true\nweight: 1.50\nempty:\nauthor:\n  name: Ana\n  role: editor\n---\n"
        f"{body('docs/river.txt')}\n",
    )
    write(
        "crlf.md",
        f"---\ntitle: Solar farm\ntags: [energy]\n---\n{body('docs/solar.md')}\n\nLast paragraph.\n",
        "\r\n",
    )
    write("crlf-no-front-matter.md", f"{body('notes-style/retro.txt')}\n", "\r\n")
    write("bom.md", "\ufeff---\ntitle: Residents\n---\n" + body("notes-style/residents.txt") + "\n")
    write("bom-no-front-matter.md", "\ufeff" + body("notes-style/school-board.txt") + "\n")
    write(
        "non-ascii.md",
        "---\ntitle: Café in Zürich — notes\ntags: [reisen, café]\n---\n"
        "The new Café Müller on Bahnhofstraße in Zürich opened on Saturday with pastries from a bakery in "
        "Malmö. Its owner, Zoë Łukasiewicz, said the espresso machine came from Torino and the chairs "
        "from a flea market in Kraków. Neighbours worried about queues on the narrow street; the city "
        "allowed six outdoor tables until 22:00.\n",
    )
    write(
        "hugo.md",
        '+++\ntitle = "Football club AGM"\ndate = 2024-05-02\ntags = ["club"]  # hugo taxonomy\n\n'
        '[params]\nauthor = "Kim"\n+++\n' + body("notes-style/football-club.txt") + "\n",
    )
    write("invalid-yaml.md", "---\ntitle: Broken\ntags: [one, two\nnext: x\n---\nSome body text here.\n")
    write("unclosed.md", "---\ntitle: Never closed\n\nA note whose front matter never ends.\n")
    write("duplicate-keys.md", "---\ntitle: A\ntitle: B\n---\nTwo titles.\n")
    write("tags-mapping.md", "---\ntags:\n  a: 1\n---\nTags as a mapping.\n")
    write("empty.md", "")
    write("only-front-matter.md", "---\ntitle: Nothing below\n---\n")
    write("non-utf8.md", "---\ntitle: Caf\xe9\n---\nLatin-1 text: na\xefve r\xe9sum\xe9.\n".encode("latin-1"))
    write(
        "long-lines.md",
        "---\ntitle: >-\n    A folded title that goes on\n    over two lines\n"
        "description: 'A very long single-quoted description that runs well past eighty characters, "
        "which a round-trip dump would wrap onto the next line'\ntags:\n    -   indented\n---\n"
        f"{body('articles/recycling.txt')}\n",
    )
    write(
        "quoted.md",
        "---\ntitle: 'It''s a \"quoted\" title'\nsubtitle: \"tab\\there\"\ntags: ['first', \"second\"]\n---\n"
        f"{body('articles/lunch.txt')}\n",
    )
    write(
        "block-scalar.md",
        "---\ndescription: |\n  Line one of a literal block.\n  Line two.\nsummary: >\n  The user's own\n  folded summary.\n---\n"
        f"{body('articles/museum.txt')}\n",
    )
    write("tags-null.md", f"---\ntags:\ntitle: Pool\n---\n{body('articles/pool.txt')}\n")
    write("tags-empty-flow.md", f"---\ntags: []\n---\n{body('articles/marathon.txt')}\n")
    write("dots-end.md", f"---\ntitle: Birds\n...\n{body('articles/birds.txt')}\n")
    write("no-trailing-newline.md", f"---\ntitle: Headphones\n---\n{body('articles/headphones.txt')}")
    write("trailing-newlines.md", f"{body('articles/flood.txt')}\n\n\n")
    write(
        "inline-tags.md",
        "# Stand-up\n\n#meeting #team/payments\n\n" + body("notes-style/team-standup.txt") + "\n\n"
        "```\n#not-a-tag in code\n```\n",
    )
    write(
        "dataview.md",
        "---\ndate: 2024-01-15\nstatus: draft\n---\nproject:: soup kitchen\n\n"
        + body("articles/soup.md")
        + "\n",
    )
    write(
        "daily/2024-03-01.md",
        "---\ntags:\n- daily\n- journal\n---\n" + body("articles/memo.txt") + "\n",
    )
    write("projects/bridge.markdown", f"---\ntags: [project]\n---\n{body('more/bridge.txt', 500)}\n")
    write("projects/readme.txt", "Not a note: a .txt file is not read by default.\n")
    write(".obsidian/workspace.md", "Hidden folders are not notes.\n")
    n = sum(1 for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {n} files under {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
