"""What a sentence of an extract summary leans on: the sentence before it ("It", "However",
"The deal", "these goals") or a person the summary has not named yet ("Ms Tan"). The extract
(summary.extract) makes a candidate that leans on a sentence the summary leaves out pay
ExtractSettings.reference_penalty."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from localsidecar.hashtags.words import CALENDAR, DEMONYMS, given_name_shaped
from localsidecar.summary.candidates import Candidate

# A sentence opening with one of these needs the sentence before it (its antecedent).
REFERENCES = frozenset(
    "it its he his him she her they their them this these those that such both ours theirs hers "
    "but however also and so yet still instead meanwhile moreover furthermore nevertheless "
    "then thus therefore otherwise besides likewise similarly".split()
)
_FIRST_WORD = re.compile(r"[^\W\d_]+")
# a person named by title and surname ("Ms Tan", not "Dr Khoo Kay Peng"): who they are is
# said where the document first names them in full
_TITLED = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr)\.? ([A-Z][\w'’-]+)(?![\w'’-]| [A-Z])")
# a pronoun early in a sentence, before any name ("In an open letter, he called ..."), is
# about someone of an earlier sentence
PRONOUNS = frozenset("he his him she her they their them".split())
EARLY_WORDS = 8
# "The staff members present agree to adopt this change": a demonstrative points back further in
DEMONSTRATIVE_WORDS = 12
_WHOLE_QUOTE = re.compile(r"^[\"“][^\"“”]+[\"”]$")  # a quotation and nothing else
# a quotation said by a pronoun, however long it is ('"... the result," he added.')
_SAYS = r"(said|says|added|adds|told|tells|explained|argued|warned|insisted|claimed)\b"
_PRONOUN_SAYS = re.compile(
    rf"[,?!\"”]\s*(he|she|they|(his|her|their) [a-z]+)\s+{_SAYS}"
)  # '..., his report said.': whose report is in the sentence before
_PRONOUN_SAYS_LAST = re.compile(rf"\s(he|she|they)\s+{_SAYS}\W*$")  # '... as scheduled he insisted.'
# an opening that points at what came before ("Despite this,", "As a result,", "On top of that")
_POINTS_BACK = re.compile(
    r"^(despite|because of|in spite of|as a result of|on top of|apart from|following|after|unlike)"
    r"\s+(this|that|these|those|it)\b|^(as a result|in addition|in response|in turn|even so|on the other hand|"
    r"in fact|indeed|after all|what is more|what's more|by then|by contrast|in contrast)\b|"
    # "Once installed, the terminal gets ...", "When asked, he ...": what is installed is said before
    r"^(once|when|if|until|unless|though|although|while) [a-z]+(ed|en),|"
    # "The following year", "The previous day": a time counted from one said before
    r"^the (following|previous|latter|former)\b|"
    # "Neither will the announcement be seen as ...": the negative it answers came before
    r"^(neither|nor) (will|would|is|are|was|were|do|does|did|has|have|had|can|could|should|must|may|might)\b|"
    # "The same feature set can now ...", "The event was won by ...", "The Paris-based exchange,
    # owner of Liffe, ...": what came before
    r"^the same\b|^the [\w'’]+-based\b|"
    # "The 22-year-old has only made 10 starts", "The Welshman added": someone named before
    r"^the \d+-year-old\b|^the (welsh|english|french|irish|scots|dutch)man\b|^the (spaniard|briton|swede|dane|kiwi)\b|"
    r"^the (event|move|decision|deal|announcement|comments?|remarks|ruling|findings?|"
    r"victory|win|defeat|incident|changes?|development|plans?|proposals?|measures?|scheme|row|dispute|"
    r"bid|offer|agreement|warning|news|figures?|result)\b(?! of\b)|"
    # "Plan rejected, as it was suggested ...", "Motion carried": the plan the sentence before gave
    r"^(the )?(plan|proposal|motion|idea|suggestion|request|amendment)s? (was |were )?"
    r"(rejected|approved|accepted|carried|adopted|declined|withdrawn|defeated|passed)\b",
    re.IGNORECASE,
)
# "Shivering in a floor-length dress, the Australian-born actress stopped ...", "a bet on the
# 39-year-old actor": someone described where the sentence before named them
_DESCRIBED = re.compile(
    r"\bthe (?:\d+-year-old|[A-Z][a-z]+-born)\b(?![^.,;]{0,20}?\s[A-Z][a-z])"  # unnamed
    # "The world's largest maker of chips for mobile phones believes ...": named before
    r"|^The world's (?:largest|biggest|leading|second-largest|second-biggest)\b(?![^.;]{0,60}?\s[A-Z][a-z])"
)
DESCRIBED_CHARS = 100
# '"I felt pretty good," said the American.': a person by nationality, named where the sentence
# before names them (a demonym that is also a person's noun: 'American', not 'British')
_NATIONAL = "|".join(
    sorted(d for d in DEMONYMS if d.endswith(("an", "i")) and d not in ("european", "asian", "latin"))
)
_NATIONAL_PERSON = re.compile(
    rf"(?<!\w, )\bthe (?:{_NATIONAL})\b(?=\s*[,.;:!?\"”]|\s+(?:said|says|added|who|has|had|was|is|will|would|won|lost|beat)\b)",
    re.IGNORECASE,
)
_SUCH = re.compile(
    r"\bsuch (?!as\b|a\b|an\b)[a-z]+"
)  # "such requests": of the sentence before; not "such as"
# "Make these goals more visible", "conclude on this stage": which goals, which stage, is said
# before; a time ("this week"), the notes' own meeting ("this call", "of this kind") or a verb
# after a pronoun ("this is") is no reference
_NOT_REFERRED = (
    "week weekend month year morning afternoon evening time quarter term season spring summer autumn "
    "fall winter decade century sprint opportunity kind sort type meeting call session "
    "is was are were will would can could should may might has have had "
    "and or to of in on for with at by as that which who"
).split()
_DEMONSTRATIVE = re.compile(rf"\b(?:this|these|those) (?!(?:{'|'.join(_NOT_REFERRED)})\b)[a-z]{{3,}}\b")


# "Industry watchers took this to mean ...", "Critics saw this as ...": "this" a pronoun, what
# it is said before
_THIS_TAKEN = re.compile(
    r"\b(?:took|take|takes|taking|saw|see|sees|seen|described|describes|called|calls|interpreted|"
    r"interprets|regarded|regards|viewed|views|welcomed|welcomes|criticised|criticized|condemned|"
    r"rejected|dismissed|denied|opposed)\s+this\s*(?:\b(?:to|as|was|is|would|will)\b|[.,;])",
    re.IGNORECASE,
)


# "was nominated the following year", "a day later": a time counted from one said before
_COUNTED_TIME = re.compile(
    r"\b(?:the (?:following|previous) (?:day|week|month|year|season|morning|night|weekend)|the next (?:day|morning)|"
    r"(?:a|one|two|three) (?:day|week|month|year)s? (?:later|earlier))\b",
    re.IGNORECASE,
)


# "Dominion Rubber Stamp & Engraving will make them.": what it makes is said before, unless
# the sentence names things itself ("... the team restored them": builds)
_ENDS_ON_THEM = re.compile(r"\bthem\W*$")
_PLURAL = re.compile(
    r"\b(?!(?:this|was|has|does|always|perhaps|across|unless|thus|news)\b)[A-Za-z]{2,}[^s\W]s\b"
)
SHORT_WORDS = 12


def _ends_on_them(text: str) -> bool:
    """A sentence of SHORT_WORDS words or fewer ends on "them" and names no things before it."""
    end = _ENDS_ON_THEM.search(text)
    return bool(end) and len(text.split()) <= SHORT_WORDS and not _PLURAL.search(text[: end.start()])


def _opens_with(text: str, words: frozenset[str]) -> bool:
    first = _FIRST_WORD.search(text[:40])
    return first is not None and first.start() <= 1 and first.group(0).lower() in words


def opens_on_someone(text: str) -> bool:
    """`text` opens with a personal pronoun ("Her work involved ...", "They agreed ...")."""
    return _opens_with(text, PRONOUNS)


def needs_antecedent(text: str) -> bool:
    """`text` opens with a pronoun, a connective ("However", "Despite this") or a noun
    that points back ("The same", "The event"), is a quotation and nothing else or one a
    pronoun says, has "such" or "this", "these", "those" and a noun among its first
    DEMONSTRATIVE_WORDS words ("Make these goals more visible") or a time counted from
    another ("the following year"), "this" as a verb's object ("took this to mean"),
    describes someone by age or birthplace in its first DESCRIBED_CHARS characters ("the
    Australian-born actress") or by nationality anywhere ("said the American"), ends on
    "them" naming no things (_ends_on_them: "will make them.") or on "he insisted", or has
    a pronoun there before any capitalised word but its first."""
    if _opens_with(text, REFERENCES):
        return True
    found = list(_FIRST_WORD.finditer(text[:200]))
    if not found:
        return False
    words = [m.group(0) for m in found]
    early = " ".join(words[:DEMONSTRATIVE_WORDS])
    if (
        _WHOLE_QUOTE.match(text)
        or _PRONOUN_SAYS.search(text)
        or _PRONOUN_SAYS_LAST.search(text)
        or _POINTS_BACK.match(text)
        or _SUCH.search(early)
        or _DEMONSTRATIVE.search(early)
        or _COUNTED_TIME.search(early)
        or _THIS_TAKEN.search(text[:200])
        or _DESCRIBED.search(text[:DESCRIBED_CHARS])
        or _NATIONAL_PERSON.search(text)
        or _ends_on_them(text)
    ):
        return True  # who said it, or what "this" is, is in the sentence before
    for w in words[1:EARLY_WORDS]:
        if w[0].isupper():
            return False
        if w in PRONOUNS:
            return True
    return False


# a run of capitalised words: a name given in full is its last two ("Chairman Alan Greenspan")
_CAPITALISED_RUN = re.compile(
    r"(?<![\w'’-])[A-Z][a-z]+(?:[-'’][A-Za-z]+)?(?: [A-Z][a-z]+(?:[-'’][A-Za-z]+)?)*(?![\w'’-])"
)


def names_a_stranger(
    text: str, before: str, introduced: Mapping[str, int] | None = None, sentence: int = 0
) -> bool:
    """`text` names someone by title and surname ("Ms Tan") whom `before` (the summary so
    far) does not name, or by a surname alone ("Greenspan said") that the document gave in
    full (`introduced`: introduced_surnames) in a sentence before `sentence` and `before`
    does not hold: the reader would not know who they are."""
    if any(m.group(1) not in before for m in _TITLED.finditer(text)):
        return True
    if not introduced:
        return False
    for m in _CAPITALISED_RUN.finditer(text):
        if len(m.group(0).split()) == 1 and introduced.get(m.group(0), sentence) < sentence:
            if not re.search(rf"\b{re.escape(m.group(0))}\b", before):
                return True
    return False


def introduced_surnames(cands: Sequence[Candidate]) -> dict[str, int]:
    """Each surname the candidates give in full ("Alan Greenspan", "Orlando Bloom": two
    capitalised words, the first no common word), with the sentence that first does."""
    out: dict[str, int] = {}
    for c in cands:
        for m in _CAPITALISED_RUN.finditer(c.text[c.lead :]):
            words = m.group(0).split()
            first = words[-2].lower() if len(words) >= 2 else ""
            if (
                first
                and given_name_shaped(first)
                and first not in CALENDAR  # "Yesterday Argentina's ..."
                and words[-1].lower() not in REFERENCES
            ):
                out.setdefault(words[-1], c.sentence)
    return out


def leans_back(c: Candidate, have: set[int]) -> bool:
    """`c` needs the sentence before it (needs_antecedent, or it opens inside a quotation
    that one opened: Candidate.quoted, or on a noun that one says: Candidate.echoes) and
    the summary, whose sentences are `have`, does not hold it, or it is one of a list of
    options (Candidate.option: read alone, "Hire new staff" reads as what was decided). A
    unit of notes is read without its topic title and speaker: "Domain: This was blocked at
    BNL" leans on the line before it all the same."""
    return c.option or (
        (c.quoted or c.echoes or needs_antecedent(c.text[c.lead :])) and c.sentence - 1 not in have
    )
