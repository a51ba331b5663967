"""The names of a document for the hashtag candidates (candidates.py): runs
of capitalised words taken whole, their titles stripped, and the one-word
names the text treats as people. docs/DESIGN.md, Hashtag candidates, gives
the rules and what each measured."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from localsidecar.hashtags.words import (
    ABBREVIATED_TITLES,
    ACRONYM_NAMES,
    CALENDAR,
    CONNECTORS,
    DEMONYMS,
    FUNCTION_WORDS,
    GENERIC,
    LIST_HEADS,
    LOCATIVES,
    MONTHS,
    NUMBER_WORDS,
    OFFICES,
    ORDINAL,
    PERSON_VERBS,
    TITLES,
    UNITS,
    Token,
    parts_of_speech,
    zipf,
)

HONORIFICS = frozenset("mr mrs ms miss dr".split())  # inside a run, a person's name starts after one
MAX_NAME_WORDS = 4  # a longer capitalised run is no tag
MAX_WORD_CHARS = 16
SENTENCE_MARKS = frozenset(".!?")
REPORTING = frozenset("said says told asked".split())  # a reported clause follows: its 'its' is another's
PERSONAL = frozenset("he she him his her hers they them their i we".split())  # a person's, not a thing's
RARE_ZIPF = 3.0  # a word rarer than this in English and unknown to the dictionary: a name


@dataclass(frozen=True)
class NameRun:
    """A maximal run of name words: tokens start..end of the document."""

    start: int
    end: int
    words: list[Token]


def name_runs(toks: list[Token], initial: bool = True, prefix: bool = True) -> list[NameRun]:
    """Every maximal run of name words (connectors inside). initial: a
    sentence-initial dictionary word starts no run unless the same run occurs
    mid-sentence (prefix: or a run opening with the same two words, 'South
    Bank Awards' beside 'the South Bank Show Awards'), and a sentence-initial
    adjective before two name words is one of them ('Public Health
    Scotland'), and so is a first name before a surname ('Mark Robinson
    said')."""
    first_names: set[int] = set()
    is_name = _name_words(toks, initial, first_names)
    for k in range(1, len(toks)):  # 'the Carry On films': a function word a name capitalises is the name's
        t = toks[k]
        if is_name[k - 1] and not toks[k - 1].brk and t.cap and not t.initial and t.lower in FUNCTION_WORDS:
            is_name[k] = is_name[k] or (t.text not in ("I", "A") and t.text.istitle())
    runs = _runs(toks, is_name)
    runs = _joined_by_and(toks, _trim_initial_words(runs, first_names, prefix) if initial else runs)
    return _without_platform(toks, runs)


# a site a name has a page on: 'FOEP ArtSpace Facebook page' is FOEP ArtSpace's page there
PLATFORMS = frozenset(
    "facebook twitter instagram youtube linkedin tiktok whatsapp mastodon discord flickr".split()
)
PAGE_WORDS = frozenset(
    "page pages group groups account accounts channel channels feed profile server".split()
)


def _without_platform(toks: list[Token], runs: list[NameRun]) -> list[NameRun]:
    """A name ending in a platform before 'page', 'group', 'account' ... ends before
    it: the page is the name's, the platform no part of it ('our linked FOEP ArtSpace
    Facebook page' names 'FOEP ArtSpace'; 'Facebook' alone stays a name)."""
    out = []
    for r in runs:
        after = toks[r.end + 1] if r.end + 1 < len(toks) and not toks[r.end].brk else None
        if (
            len(r.words) >= 2
            and r.words[-1].lower in PLATFORMS
            and after is not None
            and not after.cap
            and after.lower in PAGE_WORDS
        ):
            r = NameRun(r.start, r.end - 1, r.words[:-1])
        out.append(r)
    return out


def _demonyms_joined(first: NameRun, second: NameRun) -> bool:
    """'British' and 'Irish Lions': two peoples' words before a name are the name's."""
    return (
        len(first.words) == 1
        and len(second.words) >= 2
        and first.words[0].lower in DEMONYMS
        and second.words[0].lower in DEMONYMS
    )


JOINED_SAID = 2  # 'Quants and Quills' said this often, its second name never alone: one name
JOINED_WORDS = 4


def _joined_by_and(toks: list[Token], runs: list[NameRun]) -> list[NameRun]:
    """Two runs joined by 'and' are one name ('Quants and Quills', 'Procter and Gamble')
    when the document says the whole JOINED_SAID times or more and the second never
    stands without the first ('Arsenal and Manchester United': United is said alone), or
    when both open with a people's word ('British and Irish Lions': _demonyms_joined)."""

    def key(r: NameRun) -> tuple[str, ...]:
        return tuple(t.lower for t in r.words)

    pairs = {
        k
        for k in range(len(runs) - 1)
        if runs[k + 1].start == runs[k].end + 2
        and toks[runs[k].end + 1].lower == "and"
        and not (toks[runs[k].end].brk or toks[runs[k].end + 1].brk)
        and len(runs[k].words) + len(runs[k + 1].words) < JOINED_WORDS
    }
    if not pairs:
        return runs
    said = Counter((key(runs[k]), key(runs[k + 1])) for k in pairs)
    seconds = {key(runs[k + 1]) for k in pairs}
    joined_at = {k + 1 for k in pairs}
    alone = {key(r) for k, r in enumerate(runs) if k not in joined_at and key(r) in seconds}
    out: list[NameRun] = []
    skip = -1
    for k, r in enumerate(runs):
        if k == skip:
            continue
        if k in pairs and (
            (said[(key(r), key(runs[k + 1]))] >= JOINED_SAID and key(runs[k + 1]) not in alone)
            or _demonyms_joined(r, runs[k + 1])
        ):
            nxt = runs[k + 1]
            out.append(NameRun(r.start, nxt.end, toks[r.start : nxt.end + 1]))
            skip = k + 1
        else:
            out.append(r)
    return out


PLACEHOLDERS = frozenset({"TBA", "TBC", "TBD"})  # "(Juniors & Older) TBA GWRT": a date to come, no name


def _is_name_word(t: Token, capitalised_mid: set[str], seen_lower: set[str]) -> bool:
    if t.text in ACRONYM_NAMES:
        return True
    if t.text in PLACEHOLDERS:
        return False
    if not t.cap or t.adjective or t.lower in FUNCTION_WORDS or t.lower in CALENDAR or t.text.isdigit():
        return False
    if not t.initial:
        return True
    return t.lower in capitalised_mid or (t.lower not in seen_lower and not parts_of_speech(t.lower))


def _name_words(toks: list[Token], initial: bool, first_names: set[int]) -> list[bool]:
    """Which tokens are name words; adds to `first_names` the sentence-initial
    dictionary words taken as a first name."""
    capitalised_mid = {t.lower for t in toks if t.cap and not t.initial}
    seen_lower = {t.lower for t in toks if not t.cap}
    is_name = [_is_name_word(t, capitalised_mid, seen_lower) for t in toks]
    _numbered_names(toks, is_name)
    capitalised: dict[str, int] = {}
    for t in toks:
        if t.cap:
            capitalised[t.lower] = capitalised.get(t.lower, 0) + 1
    if not initial:
        return is_name
    # a sentence-initial first name the dictionary knows before a surname it does not, said
    # again: 'Mark Robinson said', not '#Robinson'; also when the text capitalises it alone
    # mid-sentence ('Scooter Braun ...', then '... Scooter agrees'): the more surely a first name
    for k in range(len(toks) - 1):
        if (
            toks[k].cap
            and toks[k].initial
            and (k == 0 or toks[k - 1].brk)  # a sentence's first word: not 'Picks' of 'NASA Picks SpaceX'
            and not toks[k].brk
            and toks[k].text not in PLACEHOLDERS
            and toks[k].lower not in FUNCTION_WORDS
            and toks[k].lower not in seen_lower
            and toks[k].text.isalpha()
            and not parts_of_speech(toks[k].lower) & {"ADJ", "ADV"}
            and parts_of_speech(toks[k].lower) != {"VERB"}  # 'Motion: Reappoint Monica as Vice Chair'
            and not toks[k].lower.endswith(("ed", "ing", "ly"))
            and is_name[k + 1]
            and not parts_of_speech(toks[k + 1].lower)
            and toks[k + 1].lower not in seen_lower  # 'Review GitLab issues' of notes saying 'gitlab issues'
            and capitalised.get(toks[k + 1].lower, 0) >= 2
            and not (k + 2 < len(toks) and is_name[k + 2] and not toks[k + 1].brk)
        ):
            is_name[k] = True
            first_names.add(k)
    # a sentence-initial adjective before two name words is one of them: 'Public Health Scotland'
    for k in range(len(toks) - 2):
        if (
            not is_name[k]
            and toks[k].cap
            and toks[k].initial
            and toks[k].lower not in FUNCTION_WORDS
            and "ADJ" in parts_of_speech(toks[k].lower)
            and is_name[k + 1]
            and is_name[k + 2]
            and not (toks[k].brk or toks[k + 1].brk)
        ):
            is_name[k] = True
    # 'San Francisco-based Balco': the place made an adjective is no name, 'Balco' is
    for k, t in enumerate(toks):
        if t.adjective and t.cap:
            j = k - 1
            while j >= 0 and is_name[j] and not toks[j].brk:
                is_name[j] = False
                j -= 1
    return is_name


def _numbered_names(toks: list[Token], is_name: list[bool]) -> None:
    """A number of one or two digits right after a name word is part of the
    name when the two are said together twice or a name word follows
    ('Channel 4', 'Formula 1'; not 'Arsenal 2 Chelsea 1' said once), and so is
    a year after 'of' said twice with the name ('Sound of 2005'), and an ordinal
    before a name of two words or more ('20th Century Fox')."""
    pairs: dict[tuple[str, str], int] = {}
    spots = []
    for k in range(1, len(toks)):
        t, prev = toks[k], toks[k - 1]
        if t.text.isdigit() and len(t.text) <= 2 and is_name[k - 1] and not prev.brk and prev.text.isalpha():
            pairs[(prev.lower, t.text)] = pairs.get((prev.lower, t.text), 0) + 1
            spots.append(k)
    for k in spots:
        named_after = not toks[k].brk and k + 1 < len(toks) and is_name[k + 1]
        if pairs[(toks[k - 1].lower, toks[k].text)] >= 2 or named_after:
            is_name[k] = True
    # a year after 'of' and a name word, said so twice, is the name's: 'Sound of 2005' (a poll)
    years = [
        k
        for k in range(2, len(toks))
        if toks[k].text.isdigit() and len(toks[k].text) == 4 and toks[k - 1].lower == "of" and is_name[k - 2]
    ]
    said = [(toks[k - 2].lower, toks[k].text) for k in years]
    for k, key in zip(years, said):
        is_name[k] = is_name[k] or (said.count(key) >= 2 and not (toks[k - 2].brk or toks[k - 1].brk))
    # an ordinal before a name of two words or more opens it: '20th Century Fox', not 'the 21st Century'
    for k in range(len(toks) - 2):
        if (
            ORDINAL.fullmatch(toks[k].lower)
            and is_name[k + 1]
            and is_name[k + 2]
            and not (toks[k].brk or toks[k + 1].brk)
        ):
            is_name[k] = True


def _runs(toks: list[Token], is_name: list[bool]) -> list[NameRun]:
    runs = []
    i = 0
    while i < len(toks):
        if not is_name[i]:
            i += 1
            continue
        j = i
        while not toks[j].brk and j + 1 < len(toks):
            if is_name[j + 1]:
                j += 1
            elif (
                toks[j + 1].lower in CONNECTORS
                and not toks[j + 1].brk
                and (step := _connected(toks, is_name, j + 1))
                # 'Bank of England', not 'Herbert Hansen of Respond': a surname ends a name
                and (toks[j + 1].lower != "of" or bool(parts_of_speech(toks[j].lower)))
            ):
                j += step
            else:
                break
        runs.append(NameRun(i, j, toks[i : j + 1]))
        i = j + 1
    return runs


def _connected(toks: list[Token], is_name: list[bool], k: int) -> int:
    """How far past a name word its connector at k carries the run: to the
    name word right after it (2: 'Bank of England'), or after 'the' (3: 'Top
    of the Pops', 'Lord of the Rings'); 0 when no name word follows."""
    if k + 1 < len(toks) and is_name[k + 1]:
        return 2
    the = k + 1 < len(toks) and toks[k + 1].lower == "the" and not toks[k + 1].brk and not toks[k + 1].cap
    return 3 if the and k + 2 < len(toks) and is_name[k + 2] else 0


def _trim_initial_words(runs: list[NameRun], first_names: set[int], prefix: bool = True) -> list[NameRun]:
    """'Natural' of a headline's 'Natural history museum reopens' is no name;
    'South' of 'South Bank Awards honour...' is when a run said mid-sentence
    opens with 'South Bank' (with `prefix`)."""
    mid_keys = {tuple(t.lower for t in r.words) for r in runs if not r.words[0].initial}
    mid_starts = {k[:2] for k in mid_keys} if prefix else set()  # the first two words of each
    kept = []
    for run in runs:
        r = run.words
        pos = parts_of_speech(r[0].lower)
        # an adjective before two or more capitalised words names with them ('Public Health Scotland')
        named = len(r) >= 3 and "ADJ" in pos and not r[1].initial
        said_mid = tuple(t.lower for t in r) in mid_keys or tuple(t.lower for t in r[:2]) in mid_starts
        if r[0].initial and pos and not named and run.start not in first_names and not said_mid:
            r = r[1:]
            while r and r[0].lower in CONNECTORS:
                r = r[1:]
        if r:
            kept.append(NameRun(run.end - len(r) + 1, run.end, r))
    return kept


def named_numbers(toks: list[Token]) -> frozenset[str]:
    """The number words a document capitalises mid-sentence ('the Six Nations'): part of a name."""
    return frozenset(t.lower for t in toks if t.cap and not t.initial and t.lower in NUMBER_WORDS)


def strip_titles(
    run: list[Token], named_numbers: frozenset[str] = frozenset(), said_alone: frozenset[str] = frozenset()
) -> list[Token]:
    """The run without leading titles ('Chancellor', 'Mr', 'German Chancellor'),
    without a portfolio and its title before a name of two words or more ('Industry
    Secretary Patricia Hewitt', 'UK Chancellor Gordon Brown') and the connectors at
    either end; a leading demonym goes too before an acronym or
    a person's name ('Turkish EU', 'German Wolfram Mulle': a last word rare in
    English and unknown to the dictionary), not before the words of an
    institution ('British Airways', 'Australian Rugby Union'). A leading
    number word is a count ('Twelve Labour MPs') unless in `named_numbers`,
    the number words the document capitalises mid-sentence ('the Six Nations').
    A leading hyphenated word of English words that ends in no noun describes
    the name after it when that has a word the dictionary does not know
    ('Fit-again Betsen' -> 'Betsen'; 'Anti-Doping Agency' stays whole). A demonym
    before a full name whose last word is in `said_alone` (Document.said_alone) goes
    too ('Australian Timothy Weeks', then 'Weeks')."""
    i = 0
    while i < len(run) - 1 and (
        run[i].lower in TITLES
        or (run[i].lower in NUMBER_WORDS and run[i].lower not in named_numbers)
        or (run[i].lower in DEMONYMS and (run[i + 1].lower in TITLES or _named_after_demonym(run[i + 1 :])))
        or (i == 0 and _describes(run[0]) and any(not parts_of_speech(t.lower) for t in run[1:]))
    ):
        i += 1
    inner = [
        j for j in range(i + 1, len(run) - 2) if run[j].lower in TITLES and run[j - 1].lower not in CONNECTORS
    ]
    if inner and not any(t.lower in TITLES for t in run[inner[-1] + 1 :]):
        i = inner[-1] + 1  # a portfolio and its title before a person's name: 'Foreign Secretary Jack Straw'
    honorific = [j for j in range(i + 1, len(run) - 1) if run[j].lower in HONORIFICS]
    if honorific:
        i = honorific[-1] + 1  # 'Earlier Mr Kennedy', 'at GDC Mr Allard said': the person is after 'Mr'
    while i < len(run) - 1 and (run[i].lower in CONNECTORS or (i and run[i].lower == "the")):
        i += 1  # 'Chief Executive of AOL UK': 'AOL UK', not 'Of AOL UK'; 'Lord of the Rings' -> 'Rings'
    while len(run) > i and run[-1].lower in CONNECTORS:
        run = run[:-1]
    while len(run) > i + 1 and run[-1].lower in ABBREVIATED_TITLES and run[-1].after == ".":
        run = run[:-1]  # 'Kentucky GOP Gov.' of 'Kentucky GOP Gov. Matt Bevin': the title is his
    if len(run) - i >= 3 and run[i].lower in DEMONYMS and run[-1].lower in said_alone:
        i += 1  # the nation says who he is, not his name
    return run[i:]


def _describes(t: Token) -> bool:
    """A hyphenated word of English words ending in no noun ('fit-again', 'cash-strapped')."""
    return (
        len(t.parts) > 1
        and all(parts_of_speech(p) for p in t.parts)
        and "NOUN" not in parts_of_speech(t.parts[-1])
    )


def _named_after_demonym(rest: list[Token]) -> bool:
    last = rest[-1].lower
    acronym = len(rest) == 1 and rest[0].text.isupper() and len(rest[0].text) >= 2
    return acronym or (not parts_of_speech(last) and zipf(last) < RARE_ZIPF)


_MONTH_FORMS = MONTHS | {m[:3] for m in MONTHS} | {"sept"}


def _month(word: str) -> bool:
    return word.rstrip(".") in _MONTH_FORMS


def is_tag_name(name: list[Token]) -> bool:
    """A name (titles stripped) that can be a tag: 1-4 words, none too long,
    and a single word that is no demonym, unit, number word ('Twelve'), generic word, list heading
    or days of the week ('Sundays')."""
    if not name or len(name) > MAX_NAME_WORDS or any(len(x.text) > MAX_WORD_CHARS for x in name):
        return False
    if any(x.text.isdigit() for x in name) and all(x.text.isdigit() or _month(x.lower) for x in name):
        return False  # 'Mar 12', '12 March 2019': a date
    w = name[0].lower
    return (
        len(name) > 1
        or not (
            w in DEMONYMS
            or w in OFFICES  # 'the Treasurer', 'the Deputy Chairman'
            or w in UNITS
            or w in NUMBER_WORDS
            or w in GENERIC
            or w in LIST_HEADS
            or (w.endswith("days") and w[:-1] in CALENDAR)  # 'on Sundays' (not 'Happy Mondays')
            or len(name[0].text) < 2
        )
    )


def _past_verb(word: str) -> bool:
    """An inflected verb form that is no noun or adjective: 'renewed', 'took', 'were'."""
    lemmas = parts_of_speech(word)
    return (
        bool(lemmas)
        and "NOUN" not in lemmas
        and "ADJ" not in lemmas
        and word not in ("is", "was", "has", "does")
    )


def name_key(name: list[Token]) -> str:
    """A name's key: its words in lowercase, '&' left out, and the last word
    of a name of several words without a plural -s ('South Bank Awards' and
    'South Bank Award' are one name; one word stays whole: 'Jones', 'Jon')."""
    ws = [x.lower for x in name if x.text != "&"]
    last = ws[-1]
    if len(ws) > 1 and len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is")):
        ws[-1] = last[:-1]
    return "".join(ws)


def things(toks: list[Token], runs: list[NameRun]) -> set[str]:
    """Keys (name_key) of names the text refers back to as a thing: 'its'
    later in the same sentence, with no other name, no personal pronoun and
    no reporting verb between ('Orange enjoyed growth ... its core markets',
    'France Telecom is consolidating its interest'; not 'Smith said the firm
    cut its prices'). No 'said' or past verb makes such a name a person."""
    starts = {r.start for r in runs}
    out = set()
    for r in runs:
        k = r.end + 1
        while k < len(toks) and toks[k].line == toks[r.end].line and toks[k - 1].after not in SENTENCE_MARKS:
            t = toks[k]
            if k in starts or t.lower in PERSONAL or t.lower in REPORTING:
                break
            if t.lower == "its":
                out.add(name_key(strip_titles(r.words)))
                break
            k += 1
    return out


def agents(toks: list[Token], runs: list[NameRun]) -> set[str]:
    """One-word names the text treats as people without a title or 'said': the
    subject of a past verb ('Nadia renewed it', 'Ayo and Mia were'), or joined
    by 'and' or a comma to one ('Dana, Felix'); never a name after a
    preposition of place anywhere ('in Carrow', 'from Arden')."""
    from lemminflect import getAllLemmas

    ones = [(r.start, r.words[0].lower) for r in runs if r.start == r.end]
    placed = {w for i, w in ones if i > 0 and toks[i - 1].lower in LOCATIVES}
    people = set()
    for i, w in ones:
        nxt = toks[i + 1].lower if i + 1 < len(toks) and not toks[i].brk else ""
        inflected = any(nxt not in ls for ls in getAllLemmas(nxt).values())
        if nxt and nxt not in PERSON_VERBS and _past_verb(nxt) and inflected:
            people.add(w)  # 'Nadia renewed it'; not 'Apple said' (a company says things too)
    joined = [
        (a, b)
        for (i, a), (k, b) in zip(ones, ones[1:])
        if k == i + 2 and (toks[i].after == "," or toks[i + 1].lower == "and")
    ]
    # places are listed with places ('Millbrook and Eastwater'), people with people
    for group in (placed, people):
        for _ in range(2):
            for a, b in joined:
                if (a in group or b in group) and not (group is people and {a, b} & placed):
                    group |= {a, b}
    return people - placed
