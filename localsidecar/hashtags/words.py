"""The words of a text for the hashtag candidates (candidates.py): word
lists, English frequency and parts of speech, and the tokenizer that records
what the candidate rules need to know of each word."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from localsidecar.hashtags.metrics import STOPWORDS

# tag_metrics.STOPWORDS plus function words that are never a tag or a tag's end
FUNCTION_WORDS = (
    STOPWORDS
    | frozenset(
        "am any because both each every few hers him how however just me mine many much must neither nor off once only "
        "other ours own same shall should some such through too under until very whom why yet yours across against "
        "along among around behind below beneath beside between beyond despite down during except inside outside amid throughout onto near since "
        "toward towards upon via within without per whose where whether though although unless another either "
        "here everyone someone anyone nobody somebody anybody everybody something anything nothing everything "
        "themselves himself herself "
        "yourself ourselves myself may might cannot can't won't don't says said say told asked get got".split()
    )
    | frozenset(  # contractions, their apostrophe removed ("I'm" -> 'im', "it'll" -> 'itll')
        "im ive itll youre youve youll theyre theyve theyll weve isnt arent wasnt werent dont doesnt didnt cant wont "
        "wouldnt shouldnt couldnt hasnt havent hadnt thats whats theres heres".split()
    )
)
DETERMINERS = frozenset(
    "a an the this that these those his her its their our my your some any no each every of for in on about with "
    "after before from by".split()
)
CONNECTORS = frozenset({"of", "&", "de", "van", "von", "der", "la", "le", "du", "da"})
# the lowercase words inside a person's name ("Guy de Montfort", "Hylke van der Schaaf"): a list
# of people's (summary.people); a name run crosses only the CONNECTORS among them
PARTICLES = frozenset("de du da di del della der den van von ten ter la le dos das".split())
# titles written short before a name: ranks' and US officials' ('Gov. Eric Holcomb', 'Rep. Ilhan
# Omar'); at a name run's end before their dot ('Kentucky GOP Gov. Matt Bevin') they are the next name's
ABBREVIATED_TITLES = frozenset("gen col lt maj capt sgt cpl brig adm rev supt insp prof gov sen rep".split())
TITLES = (
    frozenset(
        "mr mrs ms miss dr sir dame lord lady baron baroness earl viscount president chancellor minister prime secretary senator governor mayor judge speaker "
        "justice professor prof coach manager captain chief executive chairman chairwoman chairperson chair deputy vice "
        "treasurer director general inspector clerk councilor alderman ambassador envoy attorney commissioner superintendent "
        "sergeant detective officer king queen prince princess pope bishop father saint st councillor striker midfielder "
        "defender goalkeeper boss chef head editor founder ceo dj presenter singer actor actress rapper "
        "spokesman spokeswoman analyst economist agent winger skipper veteran briton britons mp mep msp mla "
        "flanker prop hooker flyhalf scrumhalf fullback "  # a hyphenated word is one token: fly-half -> flyhalf
        # ranks ('Gen Pervez Musharraf': their abbreviations are ABBREVIATED_TITLES); not 'major' nor
        # 'commander' ('Major League')
        "colonel lieutenant corporal brigadier admiral reverend "
        # clergy, and the style before a title ('the Rt Rev Michael Scott-Joynt', 'the Rt Hon')
        "rt archbishop cardinal rabbi imam".split()
    )
    | ABBREVIATED_TITLES
)
# titles that are an office and never a surname ('King', 'Prince', 'Bishop' can be): alone, no name
OFFICES = frozenset(
    "chairman chairwoman chairperson chair treasurer secretary president chancellor minister deputy vice "
    "director governor gov rep".split()
)
SURNAME_ZIPF = 3.5  # a name's last word this rare is a surname ('Roddick', 'Nanga'; not 'Cup', 'Act', 'Bank')
GIVEN_NAME_ZIPF = 5.0  # a first name is rarer than this in English ('Jeff', 'Alan'; not 'The', 'New')
DEMONYMS = frozenset(
    "british english french german american european chinese japanese russian scottish welsh irish italian spanish "
    "indian african australian canadian dutch swedish finnish polish greek turkish brazilian mexican korean danish "
    "norwegian belgian swiss austrian portuguese israeli iranian iraqi nigerian kenyan egyptian argentine "
    "argentinian chilean colombian peruvian venezuelan cuban jamaican angolan sudanese ethiopian somali "
    "ghanaian ugandan zimbabwean indonesian malaysian thai vietnamese filipino pakistani afghan syrian "
    "lebanese palestinian saudi jordanian ukrainian czech slovak hungarian romanian bulgarian serbian "
    "croatian icelandic taiwanese asian arab latin".split()
)
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
# months' abbreviations ('Oct 27'), not 'Jan' (a first name as often)
MONTH_ABBREVIATIONS = frozenset("feb mar apr jun jul aug sep sept oct nov dec".split())
# time zones ('11:00 UTC', '3:30pm CET'): when a meeting is, never what it is about
TIME_ZONES = frozenset("utc gmt bst cet cest eet eest est edt cst cdt mst mdt pst pdt jst aest".split())
WEEKDAY_ABBREVIATIONS = frozenset("tue tues wed thu thur thurs fri".split())  # not 'Mon', 'Sat', 'Sun'
CALENDAR = (
    WEEKDAYS
    | WEEKDAY_ABBREVIATIONS
    | MONTHS
    | MONTH_ABBREVIATIONS
    | TIME_ZONES
    | frozenset("today yesterday tomorrow".split())
)
UNITS = frozenset(
    "pounds pound euros euro dollars dollar pence cents kilometres kilometre km metres metre meters miles mile "
    "kilograms kilogram kg grams gram litres litre ml seconds second minutes minute hours hour days day weeks week "
    "months month years year decades decade percent degrees degree gb mb tb per cent times tonnes tonne tons "
    "ton ounces ounce gallons gallon barrels barrel acres acre hectares hectare bn".split()
)
NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand thousands "
    "million millions billion billions trillion trillions half halves third thirds quarter quarters fifths dozen dozens first second "
    "third fourth fifth".split()
)
GENERIC = frozenset(
    "meeting meetings committee notes note minutes agenda attendees summary summaries recap items item actions action update "
    "updates report details things thing way ways lot lots part parts kind sort "
    # a meeting's own business, never its subject
    "agendas attending attendance attendee participant participants chairperson apologies regrets quorum yeas "
    "nays ayes tbd tba recording transcript aob "  # AOB: any other business
    # a news story's people and sources, never its subject
    "firm firms analyst analysts spokesman spokeswoman spokesperson official officials statement source "
    "sources reporters".split()
)
# nouns of any news story rather than of this one (among the commonest in a news corpus across
# business, politics, sport, technology and entertainment): a term ranks lower
NEWS_GENERIC = frozenset(
    "set week weeks month months win move former chief plans plan start group half run future decision "
    "action past director executive side line news thought support system player players full change "
    "chairman cost costs return programme case problem problems issue issues key chance result results "
    "lead point head service offer share times form figures role term members level manager information "
    "success fact quarter hold claim claims boss giant reports hope total others victory talks proposals "
    "proposal opposition responsibility agreement dialogue option options destination respect reputation "
    "reputations onus leader party country countries club team coach comments view views situation "
    "position performance coming minister chancellor encounter clash fixture showdown outing contest".split()
)
# people named by what they do, said of any story's actors ('consumer', 'winner'): no topic (role_noun)
ROLE_WORDS = frozenset(
    "consumer customer investor buyer seller owner voter winner runner sprinter leader manager director "
    "trader dealer shopper viewer reader writer author actor collector member officer rival partner maker "
    "provider operator champion understudy star favourite victim suspect hero midfielder striker defender "
    "goalkeeper keeper winger skipper captain referee umpire batsman bowler playmaker newcomer councillor "
    "candidate shareholder pundit bookmaker filmmaker policymaker peacemaker believer supporter campaigner "
    "critic spokesman spokeswoman spokesperson worker resident colleague ambassador envoy attorney commissioner "
    # North American sports' positions ('the Wild defenseman', 'a rookie quarterback')
    "defenseman defensemen goaltender goalie quarterback linebacker lineman pitcher outfielder infielder".split()
)
# one country by several names, counted as one candidate under the first key ('UK', 'Britain')
COUNTRY_ALIASES = {
    alias: key
    for key, aliases in {
        "uk": "uk britain greatbritain unitedkingdom",
        "us": "us usa america unitedstates unitedstatesofamerica",
    }.items()
    for alias in aliases.split()
}
ACRONYM_NAMES = frozenset({"US"})  # all-capital names spelled like a function word ('us')
# a hyphenated word ending in one of these is an adjective ('San Francisco-based'): no part of a name
ADJECTIVE_ENDS = frozenset(
    "based born led owned backed made run linked listed bred headquartered style funded sponsored "
    "registered controlled dominated focused".split()
)
PREFIXES = frozenset("ex former pro anti non post pre vice".split())  # 'Ex-Boeing' names Boeing
TITLE_PREFIXES = frozenset("ex former vice".split())  # 'Ex-Boeing': a former title, never part of the name
OBJECT_STARTS = frozenset("the a an one its their his her this these those our my your it them".split())
LIST_HEADS = frozenset("present attendees attending apologies absent participants regrets".split())
SUBJECTS = frozenset("i you he she it we they who which that".split())
LOCATIVES = frozenset("in at near from to into of across outside around via through towards".split())
PERSON_VERBS = frozenset(
    "said says told asked added explained agreed argued proposed presented reported suggested noted thinks wants "
    "will wrote".split()
)

ORDINAL = re.compile(r"\d{1,3}(?:st|nd|rd|th)")  # '28th', '20th': fullmatch a token's lower form

_APOSTROPHE = "'’"
_TOKEN = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*['’]?|&|[^\w\s]", re.UNICODE)
_SENTENCE_END = frozenset('.!?:;"“”')
_DASHES = frozenset("-–—")


@lru_cache(maxsize=1)
def _frequencies() -> dict[str, float]:
    from wordfreq import get_frequency_dict  # the word list ships in the wheel

    return get_frequency_dict("en", wordlist="best")


def zipf(word: str) -> float:
    """log10 of occurrences per billion English words (0 for an unknown word)."""
    f = _frequencies().get(word.lower())
    return math.log10(f) + 9 if f else 0.0


def given_name_shaped(word: str) -> bool:
    """`word` (lowercase) may be a first name: no function word, rarer in English than
    GIVEN_NAME_ZIPF ('alan', 'jeff', 'orlando'; not 'the', 'new', 'united')."""
    return word not in FUNCTION_WORDS and zipf(word) < GIVEN_NAME_ZIPF


def surname_shaped(words: Sequence[str]) -> bool:
    """Two or three words whose last is rare in English (Zipf under SURNAME_ZIPF): the shape
    of a person's name ('Andy Roddick', 'Fidelis Nanga'; not 'Davis Cup', 'Deutsche Bank')."""
    return 2 <= len(words) <= 3 and zipf(words[-1]) < SURNAME_ZIPF


@lru_cache(maxsize=65536)
def parts_of_speech(word: str) -> frozenset[str]:
    """The universal POS tags the dictionary allows for `word` (lowercase);
    empty for a word it does not know."""
    from lemminflect import getAllLemmas

    return frozenset(getAllLemmas(word.lower()))


def role_noun(word: str) -> bool:
    """A noun naming people by what they do or are ('economist', 'consumers',
    'sprinter', 'nominee'): a story's actors described, never its topic.
    -ist ('economist', not 'shortlist') and -ee of a verb ('nominee',
    'employee', not 'refugee') by shape; -er and -or only as listed
    (ROLE_WORDS), since as many things end so ('voucher', 'computer')."""
    w = word.lower()
    if w in ROLE_WORDS or (
        w.endswith("s") and w[:-1] in ROLE_WORDS
    ):  # 'midfielder', unknown to the dictionary
        return True
    if not parts_of_speech(w) & {"NOUN"}:
        return False
    lemmas = _noun_lemmas(w)
    base = lemmas[0] if lemmas else w
    if base in ROLE_WORDS:
        return True
    if base.endswith("ist") and len(base) > 5:
        return not (base.endswith("list") and parts_of_speech(base[:-4]))  # 'shortlist', 'checklist'
    if base.endswith("ee") and len(base) > 4:
        root = base[:-2]
        return any("VERB" in parts_of_speech(root + x) for x in ("", "e", "ate"))
    return False


def _noun_lemmas(word: str) -> tuple[str, ...]:
    from lemminflect import getAllLemmas

    return tuple(getAllLemmas(word).get("NOUN", ()))


def specificity(word: str) -> float:
    """How much a word says about one text: rare in English is specific."""
    return min(1.5, max(0.25, (7.0 - zipf(word)) / 4.0))


@dataclass
class Token:
    text: str  # the word, possessive and in-word apostrophes removed
    lower: str
    cap: bool  # starts with an upper-case letter (or is all digits: never a name)
    initial: bool  # first word of a sentence or a title-case line: its capital says nothing
    brk: bool  # punctuation or a line end follows: no phrase crosses it
    possessive: bool
    line: int
    para: int
    after: str = ""  # the punctuation mark that follows, if any
    parts: tuple[str, ...] = ()  # a hyphenated word's parts, lowercase ('e-bike' -> e, bike)
    adjective: bool = False  # a place or name made an adjective by its last part ('London-based')


def tokenize(text: str) -> list[Token]:
    """The words of `text` with what the candidate rules need to know of them."""
    out: list[Token] = []
    para = 0
    for li, line in enumerate(unicodedata.normalize("NFKC", text).splitlines()):
        if not line.strip():
            para += 1
            continue
        pieces = _TOKEN.findall(line)
        word_caps = [p[:1].isupper() for p in pieces if p[:1].isalpha() and p.lower() not in FUNCTION_WORDS]
        # a title-case line ('Natural History Museum Reopens'), not a sentence full of names
        title_case = (
            len(word_caps) >= 3
            and sum(word_caps) >= 0.6 * len(word_caps)
            and not line.rstrip().endswith((".", "!", "?"))
        )
        start = True
        numbers_only = True  # the line's words so far are all numbers
        for p in pieces:
            if not (p[:1].isalnum() or p == "&"):
                if out and out[-1].line == li:
                    out[-1].brk = True
                    out[-1].after = out[-1].after or p
                # a dash after a number opening the line starts its text ('4533 - Need Brian to sign off')
                start = start or p in _SENTENCE_END or (p in _DASHES and numbers_only)
                continue
            poss = False
            if len(p) > 2 and p[-2] in _APOSTROPHE and p[-1] in "sS":
                p, poss = p[:-2], True
            elif p[-1] in _APOSTROPHE:
                p, poss = p[:-1], True
            parts = re.sub(f"[{_APOSTROPHE}]", "", p).split("-")
            if len(parts) > 1 and any(x.lower() in NUMBER_WORDS for x in parts):
                parts = ["0"]  # 'six-week': a count
            if (
                len(parts) > 1
                and parts[0].lower() in PREFIXES
                and parts[1][:1].isupper()
                # 'Anti-Doping Agency': a capitalised prefix other than ex-, former-, vice- is the name's
                and (parts[0].lower() in TITLE_PREFIXES or parts[0][:1].islower())
            ):
                parts = parts[1:]  # 'Ex-Boeing' -> 'Boeing'
            adjective = len(parts) > 1 and parts[-1] in ADJECTIVE_ENDS
            word = parts[0] + "".join(cap_first(x) for x in parts[1:])  # 'e-bike' -> 'eBike', shown 'EBike'
            out.append(
                Token(
                    word,
                    word.lower(),
                    word[:1].isupper(),
                    start or title_case,
                    poss,
                    poss,
                    li,
                    para,
                    parts=tuple(x.lower() for x in parts),
                    adjective=adjective,
                )
            )
            start = False
            numbers_only = numbers_only and word.isdigit()
        if out and out[-1].line == li:
            out[-1].brk = True
    return out


def cap_first(word: str) -> str:
    return word[:1].upper() + word[1:]
