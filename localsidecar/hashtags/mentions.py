"""The mentions of a document that hashtag candidates are made of (no model):
its names, noun phrases and nouns, each with where and how often it is said,
and the word rules that decide what may be one (candidates.py ranks them).
The invariants are candidates.py's: names whole, possessives split off, no
bare verb, adjective, number, date or count, no quantity noun.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from localsidecar.hashtags.binomials import binomials
from localsidecar.hashtags.document import ALL_RULES, Document, Rules, content_word
from localsidecar.hashtags.metrics import stem
from localsidecar.hashtags.names import (
    agents,
    is_tag_name,
    name_key,
    named_numbers,
    strip_titles,
    things,
)
from localsidecar.hashtags.wordclass import (
    classifying_adjective,
    common_modifier,
    nounish,
    past_form,
    plural,
    verb_gerund,
    verb_only,
)
from localsidecar.hashtags.words import (
    COUNTRY_ALIASES,
    DETERMINERS,
    NUMBER_WORDS,
    OBJECT_STARTS,
    PERSON_VERBS,
    SUBJECTS,
    TITLES,
    Token,
    parts_of_speech,
    role_noun,
    surname_shaped,
)

Kind = Literal["name", "phrase", "term"]

PHRASE_WORDS = 3
COMMON_ZIPF = 5.6  # words at least this common in English are too generic to be a tag alone
BE_FORMS = frozenset("am is are was were be been being".split())
VERB_BEFORE = frozenset("will would can could may might shall should must to".split())  # a verb follows
CLAUSE_ENDS = frozenset(".,;!?")
CHANGE_FOLLOWERS = frozenset("to by from for in at over after as again sharply".split())


@dataclass
class Mentions:
    """Every mention of one candidate key, as collected: its kind, how often
    and where it occurs, and the spellings it occurs in."""

    first: tuple[str, ...]  # the words of its first mention
    kind: Kind
    count: int = 0
    bonus: float = 1.0  # the best position bonus of a mention
    person: bool = False
    listed: bool = False
    forms: dict[str, int] = field(default_factory=dict)  # spelling -> mentions
    places: dict[str, float] = field(default_factory=dict)  # spelling -> its best position bonus
    cut: int = 0  # mentions of a phrase cut from a longer run at a common word ('public | sector unions')
    # a phrase of a classifying adjective and its noun ('nuclear waste'): a topic if repeated
    adjective: bool = False

    def add(self, ws: Sequence[Token], bonus: float, person: bool = False, listed: bool = False) -> None:
        self.count += 1
        self.person = self.person or person
        self.listed = self.listed or listed
        form = " ".join(t.text for t in ws)
        self.forms[form] = self.forms.get(form, 0) + 1
        self.places[form] = max(self.places.get(form, 1.0), bonus)
        self.bonus = max(self.bonus, bonus)

    @property
    def form(self) -> list[str]:
        """The words of the most frequent spelling; on a tie, for a name the
        one said highest (the headline's 'South Bank Awards' before a later
        'South Bank Award'), then the shortest ('UK' of 'Britain', 'UK')."""
        place = (lambda f: self.places[f]) if self.kind == "name" else (lambda f: 0.0)
        return max(self.forms, key=lambda f: (self.forms[f], place(f), -len(f))).split(" ")


class Found(dict[str, Mentions]):
    """Candidate key ('n:', 't:' or 'p:' + lowercase words) -> its mentions."""

    def add(
        self,
        key: str,
        ws: Sequence[Token],
        kind: Kind,
        bonus: float,
        person: bool = False,
        listed: bool = False,
    ) -> None:
        entry = self.setdefault(key, Mentions(tuple(t.text for t in ws), kind))
        entry.add(ws, bonus, person, listed)


def collect(doc: Document, rules: Rules = ALL_RULES) -> Found:
    """Every name, term and noun phrase of the document with its mentions."""
    found = Found()
    in_name = _collect_names(doc, rules, found)
    pairs = binomials(doc, in_name) if rules.binomials else {}
    starts = {k for ks in pairs.values() for k in ks}
    _collect_terms(doc, rules, found, in_name, frozenset(k + 2 for k in starts))
    for k in sorted(starts):  # 'foot and mouth': one phrase
        ws = doc.toks[k : k + 3]
        found.add("p:" + "".join(t.lower for t in ws), ws, "phrase", doc.bonus(ws[0], rules))
    return found


def _collect_names(doc: Document, rules: Rules, found: Found) -> set[int]:
    """Add the document's names; returns the token indices inside name runs."""
    toks = doc.toks
    in_name: set[int] = set()
    people = agents(toks, doc.runs) if rules.agent else set()
    named_things = things(toks, doc.runs) if rules.its_thing else set()
    ends = {run.end for run in doc.runs}
    numbers = named_numbers(toks)
    for run in doc.runs:
        i, j = run.start, run.end
        in_name.update(range(i, j + 1))
        name = strip_titles(run.words, numbers, doc.said_alone)
        if not is_tag_name(name):
            continue
        following = toks[j + 1].lower if j + 1 < len(toks) and not toks[j].brk else ""
        line_start = i == 0 or toks[i - 1].line != run.words[0].line
        # listed: a meeting's people (a line 'Present: ...', 'Name:' at a line start, '(Name)', '(Name, ...')
        listed = (
            (line_start and toks[j].after == ":")
            or run.words[0].line in doc.list_lines
            # words of a name the roll call lists, said anywhere: 'Dmitriy V.', 'Schaaf' of 'Hylke van der Schaaf'
            or all(x.lower in doc.people_words for x in name)
            or (len(name) == 1 and name[0].lower in doc.initials and sum(map(str.isupper, name[0].text)) > 1)
            or (
                i > 0
                and toks[i - 1].after == "("
                and toks[j].after in (")", ",")
                and (i - 1) not in ends  # 'World Anti-Doping Agency (Wada)': a name's short form
            )
        )
        # 'said' next to one word is no evidence: 'Apple said', 'the ARU said'; nor to 'Mac mini'
        said = (
            len(name) > 1
            and name[-1].cap
            and (following in PERSON_VERBS or (i > 0 and toks[i - 1].lower in PERSON_VERBS))
        )
        said = said or _described(name, toks, j)
        # 'said' and a past verb are a company's too: a name the text calls 'its' is none
        weak = (said or (len(name) == 1 and name[0].lower in people)) and name_key(name) not in named_things
        # 'Sam K', 'Lewis D.': a first name and an initial are someone of the meeting, however often said
        initialled = (
            len(name) == 2
            and name[0].text.isalpha()
            and not name[0].text.isupper()  # 'O&M', 'Q A': no first name before the letter
            and len(name[1].text) == 1
            and name[1].text.isupper()
        )
        listed = listed or initialled
        person = listed or (len(run.words) > len(name) and run.words[0].lower in TITLES) or weak
        ws = [x for x in name if x.text != "&"]
        nxt = toks[j + 1] if following else None
        if len(ws) == 1 and nxt is not None and _proper_adjective(ws[0].lower) and _noun_after(nxt):
            # 'Islamic banking': the adjective and its noun are the topic, not 'Islamic'
            found.add("p:" + ws[0].lower + nxt.lower, [ws[0], nxt], "phrase", doc.bonus(ws[0], rules))
            continue
        key = "".join(x.lower for x in ws)
        if key in COUNTRY_ALIASES:  # 'UK', 'Britain': one country, no person ('the United States will')
            key, person = COUNTRY_ALIASES[key], False
        else:
            key = name_key(ws)
        found.add("n:" + key, ws, "name", doc.bonus(ws[0], rules), person, listed)
    return in_name


DESCRIBED_WORDS = 4  # the words after a name and its comma where a title or a role may describe it


def _described(name: Sequence[Token], toks: list[Token], j: int) -> bool:
    """A name of two or three words, its last a rare word, then a comma and a title or a
    role within DESCRIBED_WORDS words: a person described ('Fidelis Nanga, a journalist
    based in ...', 'Ian Shepherdson, chief US economist at ...'; not 'Deutsche Bank, the
    German lender')."""
    if not surname_shaped([t.lower for t in name]) or toks[j].after != ",":
        return False
    for t in toks[j + 1 : j + 1 + DESCRIBED_WORDS]:
        if t.lower in TITLES or role_noun(t.lower):
            return True
        if t.brk:
            break
    return False


def _proper_adjective(word: str) -> bool:
    """A capitalised adjective of a religion, a place or an event ('Islamic',
    'Olympic', 'Arctic'): no name alone, the first word of a topic before a noun."""
    return word.endswith("ic") and len(word) > 4 and "NOUN" not in parts_of_speech(word)


def _noun_after(t: Token) -> bool:
    return not t.cap and content_word(t) and nounish(t.lower) and not verb_only(t.lower)


def content_runs(doc: Document, rules: Rules, in_name: set[int]) -> Iterator[tuple[int, int, list[Token]]]:
    """(first index, last index, run) of every run of lowercase content words
    outside names, cut back to its head noun (no trailing verb-only word)."""
    toks = doc.toks
    i = 0
    while i < len(toks):
        t = toks[i]
        if i in in_name or not content_word(t) or (t.cap and not (rules.initial_word and t.initial)):
            i += 1
            continue
        i0 = j = i
        while not toks[j].brk and j + 1 < len(toks) and content_word(toks[j + 1]) and not toks[j + 1].cap:
            j += 1
        run = toks[i0 : j + 1]
        if (
            rules.past_verb
            and len(run) > 1
            and i0 > 0
            and toks[i0 - 1].lower in VERB_BEFORE
            and not toks[i0 - 1].brk
            and "VERB" in parts_of_speech(run[0].lower)
        ):
            run, i0 = (
                run[1:],
                i0 + 1,
            )  # 'could lure users', 'plans to store nuclear waste': a verb and its object
        if (
            len(run) == 2
            and run[0].cap
            and run[1].lower.endswith("s")
            and "VERB" in parts_of_speech(run[1].lower)
        ):
            run = run[:1]  # a sentence's subject and its verb: 'Council votes to close'
        while run and verb_only(run[-1].lower):
            run = run[:-1]
        if rules.past_verb and len(run) > 1 and run[-1] is toks[j] and _past_verb_here(doc, j):
            run = run[:-1]  # 'unemployment rose to 5%': the subject is the phrase, not '#UnemploymentRose'
        i = j + 1
        if run:
            yield i0, j, run


def _past_verb_here(doc: Document, k: int) -> bool:
    """Token k is a verb of change: a past form ('rose', 'fell') followed by
    'to', 'by', a number, an adverb or a clause's end, or ending the headline;
    or an -s form before 'to' or 'by' and a number ('rises to 65')."""
    toks = doc.toks
    if (
        toks[k].lower.endswith("s")
        and "VERB" in parts_of_speech(toks[k].lower)
        and not toks[k].brk
        and k + 2 < len(toks)
        and toks[k + 1].lower in ("to", "by", "from")
        and toks[k + 2].text[:1].isdigit()
    ):
        return True  # 'the pension age rises to 65'
    if not past_form(toks[k].lower):
        return False
    if toks[k].after in CLAUSE_ENDS:
        return True  # 'the claimant count fell.'
    if toks[k].brk or k + 1 >= len(toks):
        return toks[k].line == doc.headline_line and (k + 1 >= len(toks) or toks[k + 1].line != toks[k].line)
    nxt = toks[k + 1]
    return nxt.lower in CHANGE_FOLLOWERS or nxt.text[:1].isdigit() or nxt.lower.endswith("ly")


def _in_noun_slot(doc: Document, rules: Rules, first: int, last: int, run: list[Token]) -> bool:
    """The run's head is used as a noun: after a determiner or preposition, as
    a plural, as a possessive, as the head of several words or a word the
    dictionary knows only as a noun, and not a verb before its object or a
    number ('the server loads one copy', 'profit rose 18%')."""
    toks, head = doc.toks, run[-1]
    prev = toks[first - 1].lower if first > 0 else ""
    is_plural = plural(head.lower) and not (prev in SUBJECTS or (first > 0 and toks[first - 1].cap))
    slot = (
        len(run) > 1
        or prev in DETERMINERS
        or is_plural
        or head.possessive
        or parts_of_speech(head.lower) == {"NOUN"}
    )
    nxt = toks[last + 1] if last + 1 < len(toks) and head is toks[last] and not toks[last].brk else None
    if verb_gerund(head.lower):
        # 'certificates are expiring', 'a speech criticising Tony Blair': a verb
        if prev in BE_FORMS or (nxt is not None and (nxt.cap or nxt.lower in OBJECT_STARTS)):
            return False
    if (
        nxt is not None
        and "VERB" in parts_of_speech(head.lower)
        and (
            nxt.lower in OBJECT_STARTS
            or nxt.text.isdigit()
            or (rules.counted_verb and nxt.lower in NUMBER_WORDS)
        )
    ):
        return False
    return slot


def _collect_terms(
    doc: Document, rules: Rules, found: Found, in_name: set[int], after_and: frozenset[int] = frozenset()
) -> None:
    """Add the head noun of every run of lowercase content words and the
    2-3-word phrases ending there; a run that ends a binomial's first noun or
    starts at its second (token indices `after_and`: 'mouth crisis' of 'foot and
    mouth crisis') is the binomial's, no term or phrase of its own."""
    for first, last, run in content_runs(doc, rules, in_name):
        if first in after_and or (last + 2 in after_and and run[-1] is doc.toks[last]):
            continue
        head = run[-1]
        if head.line in doc.list_lines:
            continue  # 'Participants (voting members in bold):' says who came, not what about
        if not ((_in_noun_slot(doc, rules, first, last, run) or not rules.noun_slot) and nounish(head.lower)):
            continue
        found.add("t:" + stem(head.lower), [head], "term", doc.bonus(head, rules))
        for n in range(2, min(PHRASE_WORDS, len(run)) + 1 if rules.phrases else 2):
            ws = run[-n:]
            adjective = rules.adjective_phrase and n == 2 and classifying_adjective(ws[0].lower)
            rest = ws[1:] if adjective else ws
            # 'files containing security details': after a plural noun a verb's -ing form is
            # the noun's participle, not the phrase's modifier ('mobile roaming charges' keeps it)
            participle = n < len(run) and verb_gerund(ws[0].lower) and plural(run[-n - 1].lower)
            if (
                not participle
                and all(not verb_only(w.lower) and not w.lower.endswith("ly") for w in rest)
                and not any(plural(w.lower) for w in ws[:-1])
            ):
                key = "p:" + "".join(w.lower for w in ws)
                found.add(key, list(ws), "phrase", doc.bonus(ws[0], rules))
                found[key].adjective = adjective
                if rules.common_cut and n < len(run) and common_modifier(run[-n - 1].lower):
                    found[key].cut += 1
