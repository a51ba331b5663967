"""Terms of a document said only as a modifier (candidates.py adds them to
the collected mentions): the noun a story keeps putting before other nouns
names its domain ('doping offences', 'doping case', 'doping test' give
'doping'; 'broadband prices', 'broadband services' give 'broadband').
Invariant: a word the document also says alone or as a head, or twice in
one phrase that holds half its uses, is left to the term and phrase rules of mentions.py."""

from __future__ import annotations

from localsidecar.hashtags.document import Document, Rules
from localsidecar.hashtags.mentions import Found, content_runs
from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.wordclass import BROAD_MODIFIER_ZIPF, gerund, nounish, plural, verb_only
from localsidecar.hashtags.words import Token, parts_of_speech, zipf

MODIFIER_USES = 3  # a modifier said this often names the domain ('doping'); an adjective once more
RARE_ADJECTIVE_ZIPF = 4.0  # a word known only as an adjective, this rare: a domain ('broadband')


def add_modifier_terms(doc: Document, rules: Rules, found: Found) -> None:
    """Add as a term each word the document says only before other nouns, at
    least MODIFIER_USES times (a word the dictionary knows only as an
    adjective: once more, and rarer than RARE_ADJECTIVE_ZIPF), before at
    least two different heads, no phrase of it said twice ('interest rates',
    'winter deaths' stand for it), no common word ('world trade') nor a
    plural."""
    in_name = {k for r in doc.runs for k in range(r.start, r.end + 1)}
    uses: dict[str, list[Token]] = {}
    heads: dict[str, set[str]] = {}
    pairs: dict[tuple[str, str], int] = {}
    for _first, _last, run in content_runs(doc, rules, in_name):
        for w, nxt in zip(run, run[1:]):
            key = stem(w.lower)
            uses.setdefault(key, []).append(w)
            heads.setdefault(key, set()).add(stem(run[-1].lower))
            pairs[(key, nxt.lower)] = pairs.get((key, nxt.lower), 0) + 1
    for key, ws in uses.items():
        word, said = ws[0].lower, doc.stem_count.get(key, 0)
        adjective = verb_only(word) and not gerund(word) and "ADJ" in parts_of_speech(word)
        top = max(n for (k, _), n in pairs.items() if k == key)
        if (
            "t:" + key in found
            or len(ws) < said  # said alone or as a head too: the term rules decide
            or said < MODIFIER_USES + adjective
            or len(heads[key]) < 2
            # a phrase said twice, in half its uses or more, stands for it ('winter deaths', 'interest
            # rates'); not 'impeachment inquiry' of impeachment's inquiry, probe, hearings, investigators
            or (top >= 2 and 2 * top >= len(ws))
            or zipf(word) >= (RARE_ADJECTIVE_ZIPF if adjective else BROAD_MODIFIER_ZIPF)
            or not (nounish(word) or adjective)
            or plural(word)
        ):
            continue
        for w in ws:
            found.add("t:" + key, [w], "term", doc.bonus(w, rules))
