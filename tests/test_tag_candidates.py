"""Hashtag candidates (tag_candidates), the plan's choice of tags (TagPlan.finish),
the label scorer (lab/tag_labels) and the sidecar's tags on the real draft."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from localsidecar.cli import main as cli
from localsidecar.decoding.speculative import SpecConfig
from localsidecar.hashtags.candidate import overlaps
from localsidecar.hashtags.candidates import (
    CANDIDATES,
    OFFER_FLOOR,
    RANKED,
    TOPIC_CHOICES,
    Candidate,
    candidates,
    offer,
)
from localsidecar.hashtags.document import Rules
from localsidecar.hashtags.generation import HashtagSettings, TagPlan, tag_key
from localsidecar.hashtags.metrics import tag_words
from localsidecar.hashtags.words import role_noun, tokenize
from localsidecar.lab.hashtag_eval import aggregate
from localsidecar.lab.tag_labels import (
    LabelError,
    add_label_scores,
    is_date_or_count,
    label_scores,
    load_labels,
    parse_labels,
)

from .helpers import BENCHMARKS, one_line_error

TAGSET = BENCHMARKS / "tagset"
LABELS = TAGSET / "labels.json"

CHANCELLOR = (
    "Schroeder backs euro reform\n\n"
    "German Chancellor Gerhard Schroeder said on Monday that the euro needed reform. "
    "Schroeder told reporters in Berlin that the UK's economy suffered less in 2004. "
    "Residents of Berlin protested. The reform of the euro was agreed on 25 August after 30 years of talks, "
    "and the reform plan will be published.\n"
)


def texts(cands):
    return [c.text for c in cands]


def test_a_name_is_taken_whole_without_its_title():
    got = texts(candidates(CHANCELLOR, limit=20))
    assert "GerhardSchroeder" in got
    assert not any(t.startswith(("German", "Chancellor")) for t in got), got
    assert "Schroeder" not in got  # counted as a later mention of the whole name


def test_a_sentence_initial_adjective_before_two_name_words_is_part_of_the_name():
    doc = (
        "Vaccine campaign\n\nThe uptake was low. Public Health Scotland plans a campaign in pharmacies. "
        "Yesterday Gerhard Schroeder visited. Natural history is popular. Heavy Rain fell on Glasgow.\n"
    )
    found = texts(candidates(doc, limit=20))
    assert "PublicHealthScotland" in found and "HealthScotland" not in found, found
    assert "GerhardSchroeder" in found and "YesterdayGerhardSchroeder" not in found  # an adverb is no part
    assert not {"Natural", "HeavyRain"} & set(found)  # one name word after it is not enough


def test_a_possessive_is_split_not_glued():
    got = texts(candidates(CHANCELLOR, limit=20))
    assert "UK" in got and not any(t.startswith("UKs") for t in got), got
    toks = [t for t in tokenize("The UK's economy and Residents' groups") if t.possessive]
    assert [t.text for t in toks] == ["UK", "Residents"]


def test_no_verb_date_number_or_sentence_initial_word():
    cands = candidates(CHANCELLOR, limit=20)
    words = {w for c in cands for w in tag_words(c.text)}
    assert not words & {
        "suffered",
        "said",
        "told",
        "agreed",
        "monday",
        "august",
        "25",
        "30",
        "years",
        "2004",
    }, words
    assert "Residents" not in [c.text for c in cands if c.kind == "name"]
    assert "Reform" in texts(cands)  # the topic, a noun used as one
    assert "Backs" not in texts(cands)  # 'Schroeder backs euro reform': a verb after a name


def test_candidates_are_distinct_by_meaning_and_ranked():
    for f in sorted((TAGSET / "docs").iterdir())[:8]:
        cands = candidates(f.read_text(encoding="utf-8"))
        assert 3 <= len(cands) <= 8, f.name
        assert [c.score for c in cands] == sorted((c.score for c in cands), reverse=True)
        for i, a in enumerate(cands):
            assert not any(overlaps(a.stems, b.stems) for b in cands[i + 1 :]), (f.name, a.text)


def test_the_summary_only_ranks():
    doc = CHANCELLOR
    summary = "Berlin hosts the summit in Paris."
    alone, with_summary = candidates(doc, limit=20), candidates(doc, summary, limit=20)
    assert set(texts(alone)) == set(texts(with_summary))  # it adds nothing
    assert not {"Hosts", "Summit", "Paris"} & set(texts(with_summary))
    score = {c.text: c.score for c in alone}
    assert {c.text: c.score for c in with_summary}["Berlin"] == pytest.approx(score["Berlin"] * 1.2)
    off = candidates(doc, summary, limit=20, rules=Rules(summary=False))
    assert {c.text: c.score for c in off} == score


NOTES = (
    "Team sync\n\nAttendees: Priya Natarajan, Tom Berg\n\n"
    "Priya Natarajan said the database migration is half done. Tom Berg will test the migration on staging. "
    "The migration of the orders database needs a rollback plan. The rollback plan is Tom Berg's job.\n"
)


def test_a_meetings_people_named_by_one_word_are_no_candidates():
    notes = NOTES.replace(" Natarajan", "").replace(" Berg", "")
    on, off = candidates(notes, limit=20), candidates(notes, limit=20, rules=Rules(lone_first_name=False))
    assert {"Priya", "Tom"} <= set(texts(off)) and not {"Priya", "Tom"} & set(texts(on)), texts(on)
    assert "Attendees" not in texts(off)  # a list's heading is no name
    assert [c for c in off if c.text == "Priya"][0].listed
    assert "Migration" in texts(on)  # the topic stays
    # one named first keeps the place: a story about them
    profile = "Wei\n\nPresent: Wei, Ana\n\nWei wrote the agenda. Wei and Wei again.\n"
    assert texts(candidates(profile))[:1] == ["Wei"]


def test_a_one_word_subject_of_a_past_verb_is_a_person_unless_a_place():
    doc = (
        "Certificate outage\n\n"
        "The certificate expired on one server. Nadia renewed it by hand. Ayo and Mia were on call. "
        "The leisure centre in Carrow closed; Carrow opened a new one. Floods hit the districts of Millbrook and Eastwater. "
        "Eastwater flooded again.\n"
    )
    person = {c.text: c.person for c in candidates(doc, limit=20)}
    off = {c.text: c.person for c in candidates(doc, limit=20, rules=Rules(agent=False))}
    assert person["Nadia"] and person["Ayo"] and person["Mia"], person
    assert not off["Nadia"] and not off["Ayo"]
    assert not person["Carrow"] and not person["Eastwater"] and not person["Millbrook"], person


def test_no_quantity_noun_or_counted_verb():
    doc = (
        "Gold stolen from the Kessel museum\n\n"
        "Thieves stole eleven pieces of gold jewellery. The pieces of jewellery were old; the pieces were small. "
        "The jewellery was found by a farmer. The thieves took two pairs of earrings and the jewellery box.\n"
    )
    on = texts(candidates(doc, limit=20))
    assert "Jewellery" in on and not {"Pieces", "Pairs"} & set(on), on
    assert "Pieces" in texts(candidates(doc, limit=20, rules=Rules(partitive=False)))
    soup = "# Red lentil soup (serves four)\n\nLentils, onions and stock. The soup serves four people.\n"
    assert "Serves" not in texts(candidates(soup, limit=20))
    assert "Serves" in texts(candidates(soup, limit=20, rules=Rules(counted_verb=False)))


def test_a_sentence_initial_word_outside_a_name_reads_as_lowercase():
    doc = (
        "Review: the Arden headphones\n\n"
        "Battery life is excellent. Sound is clear on the train. Battery life beats the rivals.\n\n"
        "Council votes to close the pool. Council votes are public.\n"
    )
    on, off = (
        texts(candidates(doc, limit=20)),
        texts(candidates(doc, limit=20, rules=Rules(initial_word=False))),
    )
    assert "BatteryLife" in on and "BatteryLife" not in off, (on, off)
    assert "Votes" not in on and "CouncilVotes" not in on, on  # a subject and its verb
    assert "Arden" in on  # a name mid-line is still a name


def test_finish_tops_up_drops_repeats_and_keeps_a_topic():
    plan = HashtagSettings().plan("", NOTES)
    ranked = [c.text for c in plan.candidates]
    assert plan.want == 3 and len(ranked) >= 4
    # the model repeats itself and picks a low-ranked person: topped up from the ranking
    repeat = "#" + ranked[0]
    tags = plan.finish([repeat, repeat, repeat])
    assert len(tags) == 3 and tags[0] == repeat
    assert len({tag_key(t) for t in tags}) == 3
    people = [c for c in plan.candidates if c.person]
    assert people and all(c.kind == "name" for c in people)
    low = [c for c in people if c not in plan.candidates[:3]]
    for c in low:
        assert "#" + c.text not in plan.finish(["#" + c.text])
    # only names chosen: the last gives way to the best topic
    names = [c for c in plan.candidates if c.kind == "name"][:3]
    got = plan.finish(["#" + c.text for c in names])
    assert any(plan.candidates[[x.text for x in plan.candidates].index(t[1:])].kind != "name" for t in got), (
        got
    )
    # items outside the candidates are not tags
    assert all(t[1:] in ranked for t in plan.finish(["#Priya", "#Nonsense", "#Migration"]))


def test_the_offer_keeps_three_then_only_strong_candidates():
    ranked = [
        Candidate(t, (t.lower(),), "term", s, 1) for t, s in zip("ABCDEF", (4.0, 3.0, 0.5, 2.5, 2.0, 1.9))
    ]
    assert [c.text for c in offer(ranked, 3)] == ["A", "B", "C", "D", "E"]  # F: 1.9 < 0.5 x 4.0
    assert all(c.score >= OFFER_FLOOR * 4.0 for c in offer(ranked, 3)[3:])
    assert [c.text for c in offer(ranked[:2], 3)] == ["A", "B"]
    plan = HashtagSettings().plan("", NOTES)  # the score picker reads twice CANDIDATES, no floor
    assert list(plan.candidates) == offer(candidates(NOTES, "", RANKED), 2 * CANDIDATES, 2 * CANDIDATES)
    assert [c.text for c in plan.candidates][-2:] == ["PriyaNatarajan", "TomBerg"]  # the listed people last


def test_plan_offers_only_candidates_of_the_document():
    plan = HashtagSettings().plan("A summary about cats and the ferry.", NOTES)
    assert plan.allowed == {tag_key(c.text) for c in plan.candidates}
    assert "cats" not in plan.allowed and "ferry" not in plan.allowed
    assert "{2,2}" in plan.grammar.splitlines()[0]  # the model is asked for three items
    for doc in ("😀🎉🔥", "x", "The 2024 of", ""):
        assert HashtagSettings().plan("A summary about cats.", doc) is None, doc


# --- the label scorer ----------------------------------------------------------------------


LABEL = parse_labels({"d": {"good": ["Ferry|FerryService", "Carra"], "bad": ["Monday", "HelenOkafor"]}})["d"]
DOC = "The ferry service to Carra resumes on Monday, Helen Okafor said. Ferries run daily."


def test_label_scores_by_hand():
    assert label_scores(["#Ferries", "#Carra", "#Monday"], LABEL, DOC) == {
        "good": 2 / 3,
        "bad": 1 / 3,
        "recall": 1.0,
    }
    # FerryService and Ferry are one entry: counted once for recall, both good
    assert label_scores(["#FerryService", "#Ferry"], LABEL, DOC) == {"good": 1.0, "bad": 0.0, "recall": 0.5}
    # not in the document (the summary's invention), a count: bad; a true but unlabelled tag: neither
    assert label_scores(["#Hospital", "#30Years", "#Daily"], LABEL, DOC) == {
        "good": 0.0,
        "bad": 2 / 3,
        "recall": 0.0,
    }
    assert label_scores([], LABEL, DOC) == {"good": 0.0, "bad": 0.0, "recall": 0.0}


def test_dates_and_counts():
    assert is_date_or_count("#25August") and is_date_or_count("#2024") and is_date_or_count("#Monday")
    assert not is_date_or_count("#NimbusX5") and not is_date_or_count("#Sprint42")


def test_parse_labels_refuses_malformed_files(tmp_path):
    for bad in ([], {"d": {"good": []}}, {"d": {"good": ["A"], "bad": [1]}}, {"d": {"good": ["|"]}}):
        with pytest.raises(LabelError):
            parse_labels(bad)
    assert parse_labels({"_about": "x", "d": {"good": ["A|B"]}}) == {
        "d": parse_labels({"d": {"good": ["A|B"]}})["d"]
    }
    p = tmp_path / "l.json"
    p.write_text("{", encoding="utf-8")
    with pytest.raises(LabelError, match="not valid JSON"):
        load_labels(str(p))


def test_label_scores_aggregate_as_means():
    recs = [
        {"id": "d", "rows": [{"variant": "v", "hashtags": ["#Ferry", "#Monday"]}]},
        {"id": "e", "rows": [{"variant": "v", "hashtags": ["#Carra"]}]},
    ]
    add_label_scores(recs, {"d": LABEL, "e": LABEL}, {"d": DOC, "e": DOC})
    for r in (row for rec in recs for row in rec["rows"]):
        for k in (
            "valid_json",
            "n_tags",
            "dup_rate",
            "grounded",
            "hashtag_jaccard",
            "soft",
            "extra_s",
            "extra_tokens",
            "total_s",
        ):
            r.setdefault(k, None)
    (s,) = aggregate(recs)
    assert s["good"] == pytest.approx((0.5 + 1.0) / 2) and s["bad"] == pytest.approx(0.25)
    assert s["recall"] == pytest.approx((0.5 + 0.5) / 2)


def test_the_tagset_is_labelled_and_varied():
    labels = load_labels(str(LABELS))
    docs = {f.stem for f in (TAGSET / "docs").iterdir()}
    assert len(docs) >= 30 and docs == set(labels)
    kinds = {
        e["kind"] for k, e in json.loads(LABELS.read_text(encoding="utf-8")).items() if not k.startswith("_")
    }
    assert len(kinds) >= 8


def test_cli_scores_no_model_variants_against_the_labels(tmp_path):
    docs = sorted(str(f) for f in (TAGSET / "docs").iterdir())[:6]
    r = CliRunner().invoke(
        cli,
        [
            "hashtags-eval",
            *docs,
            "--variants",
            "keywords,salience",
            "--labels",
            str(LABELS),
            "--json",
            "--quiet",
        ],
    )
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.output.splitlines()]
    labels = load_labels(str(LABELS))
    by_path = {Path(d).stem: Path(d).read_text(encoding="utf-8") for d in docs}
    for rec in (x for x in lines if x["kind"] == "document"):
        for row in rec["rows"]:
            assert {k: row[k] for k in ("good", "bad", "recall")} == label_scores(
                row["hashtags"], labels[rec["id"]], by_path[rec["id"]]
            )
    (summary,) = [x for x in lines if x["kind"] == "summary"]
    sal = next(v for v in summary["variants"] if v["variant"] == "salience")
    assert sal["n_tags"] == 3 and 0 <= sal["bad"] <= sal["good"] <= 1
    bad = tmp_path / "labels.json"
    bad.write_text('{"x": {"good": []}}', encoding="utf-8")
    r = CliRunner().invoke(cli, ["hashtags-eval", docs[0], "--variants", "salience", "--labels", str(bad)])
    assert r.exit_code == 2 and "needs a non-empty list 'good'" in one_line_error(r)


# --- the real draft ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("doc", ["migration_notes", "economy_growth", "lentil_soup"])
def test_sidecar_tags_come_from_the_candidates(engine, doc):
    text = (TAGSET / "docs" / f"{doc}.txt").read_text(encoding="utf-8")
    res = engine.run(doc, text, "rebased", SpecConfig(draft_max=4, max_tokens=64))
    h = res.hashtags
    plan = HashtagSettings().plan(res.summary, text)
    offered = {"#" + c.text for c in plan.candidates}
    assert h.valid_json and len(h.raw_items) >= 1, h.raw
    assert 3 == len(h.tags) == len({tag_key(t) for t in h.tags}), h.tags
    assert set(h.tags) <= offered, (h.tags, offered)
    assert all(not is_date_or_count(t) and not any(w.isdigit() for w in tag_words(t)) for t in h.tags), h.tags
    assert not any(t in ("#Said", "#Suffered", "#Agreed", "#Proposed") for t in h.tags)


@pytest.mark.slow
@pytest.mark.parametrize("doc", ["school_strike", "vaccine_trial", "data_breach"])
def test_the_sidecars_set_names_a_topic_the_labels_call_good(engine, doc):
    """Each of these documents' labels lists topics (a strike, a vaccine, a
    breach); the offer holds several and the set holds one of them, good by
    the labels."""
    text = (TAGSET / "docs" / f"{doc}.txt").read_text(encoding="utf-8")
    res = engine.run(doc, text, "rebased", SpecConfig(draft_max=4, max_tokens=64))
    plan = HashtagSettings().plan(res.summary, text)
    by_key = {tag_key(c.text): c for c in plan.candidates}
    assert sum(c.topic for c in plan.candidates) >= 2, texts(plan.candidates)
    topics = [t for t in res.hashtags.tags if by_key[tag_key(t)].topic]
    assert topics, (res.hashtags.tags, texts(plan.candidates))
    label = load_labels(str(LABELS))[doc]
    assert any(label_scores([t], label, text)["good"] == 1.0 for t in topics), (topics, label)


# --- names whole and clean, topics (issue 33) ---------------------------------------------

NEWS = (
    "Sprinter banned over drugs\n\n"
    "The drugs came from the San Francisco-based Balco laboratory, which supplied several athletes with them, "
    "prosecutors said. The laboratory has denied that it did anything wrong.\n\n"
    "A former director of the company, who worked as an Ex-Boeing engineer for years, gave evidence. "
    "The maps were drawn by Herbert Hansen of Respond, a small team of experts. "
    "In the final race the sprinter beat German Wolfram Mulle by a second. "
    "Talks on the Turkish EU bid were held while the travel of staff was paid by British Airways. "
    "The match was run by the Australian Rugby Union at the stadium. "
    '"I\'m not sure of it," said DJ John Peel on the radio. The claims were made as Balco said it would '
    "appeal. It'll take years, the experts think, and the Bank of England has no role in it, said Karen "
    "Thomson, Chief Executive of AOL UK.\n"
)


def test_a_name_is_whole_and_clean():
    got = {c.text: c for c in candidates(NEWS, limit=40)}
    # a place made an adjective is no part of a name; a prefix is none either
    assert "Balco" in got and not any("Francisco" in t or t.startswith("San") for t in got), got
    assert "Boeing" in got and "ExBoeing" not in got
    # a surname ends a name before 'of'; 'of' inside an institution's name stays
    assert {"HerbertHansen", "Respond", "BankOfEngland"} <= set(got) and "HerbertHansenOfRespond" not in got
    # a demonym goes before a person or an acronym, not before an institution's words
    assert {"WolframMulle", "EU", "BritishAirways", "AustralianRugbyUnion"} <= set(got), got
    assert not {"GermanWolframMulle", "TurkishEU"} & set(got)
    assert "JohnPeel" in got and got["JohnPeel"].person and "DJJohnPeel" not in got  # a title
    assert "AOLUK" in got and "OfAOLUK" not in got  # a title and the 'of' after it go
    assert not {"Im", "Itll"} & set(got)  # contractions are no words
    assert not got["Balco"].person  # 'Balco said': one word next to 'said' is no person


RATES = (
    "Bank holds interest rates\n\n"
    "The Bank of England held interest rates at 4.75% on Thursday. Interest rates have not moved since August, "
    "and economists expect interest rates to rise. Mortgage rates followed.\n\n"
    "Separately, the price of international roaming fell, though travellers find roaming costly. Binge "
    "drinking is a worry, and binge drinking in towns grows, a report criticising Tony Blair said. Satellite "
    "maps aid the relief effort.\n"
)


def test_a_topic_is_a_phrase_an_activity_or_an_event_not_a_verb():
    on = {c.text: c for c in candidates(RATES, limit=40)}
    # a phrase holding most mentions of its head takes its place
    assert "InterestRates" in on and "Rates" not in on, on
    off = {c.text: c for c in candidates(RATES, limit=40, rules=Rules(phrase_heads=False))}
    assert on["InterestRates"].count == 5 > off["InterestRates"].count  # all five mentions of rates count
    assert on["InterestRates"].score > off["InterestRates"].score
    # a rare -ing form repeated in a noun's place is a topic; one before an object is a verb
    assert {"Roaming", "BingeDrinking"} <= set(on) and "Criticising" not in on, on
    assert all(on[t].topic for t in ("InterestRates", "Roaming", "BingeDrinking"))
    assert not on["TonyBlair"].topic and not on["BankOfEngland"].topic
    cup = candidates(
        "Yeading face Newcastle\n\nThe part-time side from west London will play against Newcastle in the FA "
        "Cup after a long run of wins. Every ticket for the FA Cup tie at the small ground has been sold.\n"
    )
    assert [c.topic for c in cup if c.text == "FACup"] == [True], texts(cup)


def test_a_headline_verb_found_once_is_no_term():
    doc = (
        "Satellite mapping aids Darfur relief\n\nAid workers in Darfur use maps. The maps help aid groups.\n"
    )
    assert "Aids" not in texts(candidates(doc, limit=20))
    assert "Aids" in texts(candidates(doc, limit=20, rules=Rules(headline_verb=False)))


def test_an_offer_of_names_takes_topics_and_finish_keeps_the_models_topic():
    names = [Candidate(t, (t.lower(),), "name", s, 2) for t, s in zip("ABCDE", (4.0, 3.8, 3.6, 3.4, 3.2))]
    weak = Candidate("Filler", ("filler",), "term", 0.5, 1)  # below TOPIC_FLOOR of the best
    topic = Candidate("Transfer", ("transfer",), "term", 1.6, 3)
    fee = Candidate("Fee", ("fee",), "term", 1.4, 2)
    assert offer([*names, weak], 3) == names  # no topic strong enough: none is added
    # topics take the last names' places (the list keeps its length): the model chooses among them
    offered = offer([*names, weak, topic, fee], 3)
    assert offered == [*names[:3], topic, fee]
    more = [Candidate(t, (t.lower(),), "term", 1.3, 2) for t in ("Wage", "Deal")]
    assert offer([*names, weak, topic, fee, *more], 3, 10) == [*names, topic, fee, more[0]]  # TOPIC_CHOICES
    assert TOPIC_CHOICES == 3
    plan = TagPlan("", frozenset(tag_key(c.text) for c in offered), tuple(offered), 3)
    assert plan.finish(["#A", "#B", "#C"]) == ["#A", "#B", "#Transfer"]  # the ranking's best topic
    assert plan.finish(["#A", "#B", "#C", "#Fee", "#Transfer"]) == ["#A", "#B", "#Fee"]  # the model's
    assert plan.finish(["#A", "#Transfer", "#C"]) == ["#A", "#Transfer", "#C"]
    # a generic or role noun is no topic: it neither fills the offer's topics nor the set's
    role = Candidate("Consumers", ("consumers",), "term", 1.6, 3, generic=True)
    assert not role.topic and offer([*names, role], 3) == names


def test_number_words_role_nouns_and_broad_words_are_no_topic():
    doc = (
        "Consumers cut spending on music\n\n"
        "The survey - Twelve retailers took part - found that consumers spent less on music and on cinema "
        "seats. Consumers said ticket prices were high, an economist at the bank said. Economists expect "
        "ticket prices to fall; the economist said consumers would return to music. Twelve cinemas closed. "
        "Ticket prices went up again, the survey found.\n"
    )
    got = {c.text: c for c in candidates(doc, limit=40)}
    assert not any(set(c.words) & {"twelve"} for c in got.values()), got  # a count, never a tag
    for role in ("Consumers", "Economist"):
        assert role in got and got[role].generic and not got[role].topic, got
    assert "Music" in got and not got["Music"].topic  # 'music' names a whole domain
    people = ("champion", "understudy", "sprinters", "nominees", "economists", "winner", "journalist")
    things = ("shortlist", "vouchers", "computer", "refugee", "committee", "banking", "broadband")
    assert all(map(role_noun, people)) and not any(map(role_noun, things))
    assert got["TicketPrices"].topic and got["TicketPrices"].named_topic
    # the offer's topics are the phrase and the specific terms, never the role nouns
    offered = offer(list(got.values()), 2 * CANDIDATES, 2 * CANDIDATES)
    assert "TicketPrices" in texts(offered)
    plan = TagPlan("", frozenset(tag_key(c.text) for c in offered), tuple(offered), 3)
    assert any(by.topic for by in offered if "#" + by.text in plan.finish(["#Consumers", "#Economist"]))


def test_a_proper_adjective_before_a_noun_makes_a_topic_and_a_sentence_of_names_is_no_title():
    doc = (
        "Malaysia lifts Islamic bank limit\n\n"
        "Britain's Kathy Butler and Malaysia's central bank agreed on Islamic banking in Kuala Lumpur, "
        "Sunday's New Straits Times said.\n\n"
        "Islamic banking grew fast. Butler said Islamic banking units may sell stakes, and Islamic banking "
        "groups welcomed it.\n"
    )
    got = {c.text: c for c in candidates(doc, limit=40)}
    assert "IslamicBanking" in got and got["IslamicBanking"].named_topic, got
    assert "Islamic" not in got  # an adjective alone is no name
    # the first paragraph is a sentence, not a title-case line: 'Butler' stays in the name
    assert "KathyButler" in got and "Butler" not in got and "Kathy" not in got, got


TAKEOVER_TURN = (
    "Traders said the exchange had rejected the offer again and shareholders wanted a higher price. "
    "The board of the exchange met on Monday to discuss the offer from its rival, and shareholders waited. "
)
TAKEOVER = (
    "Exchange rejects takeover bid\n\n"
    "The London Stock Exchange has rejected a takeover bid from Deutsche Boerse. The LSE said the bid was too low."
    "\n\n"
    + TAKEOVER_TURN * 6
    + "\n\nAnalyst Peter Quimby at a small broker thought the takeover bid would return. "
    + TAKEOVER_TURN * 2
    + "The LSE will meet shareholders again. The LSE board said the takeover bid undervalued it.\n"
)


def test_an_acronym_and_its_name_are_one_entity():
    got = texts(candidates(TAKEOVER, limit=RANKED))
    # one of the two, the better ranked: the full name, which the headline's 'Exchange' names too
    assert "LondonStockExchange" in got and "LSE" not in got, got
    assert "LSE" in texts(candidates(TAKEOVER, limit=RANKED, rules=Rules(headline_name=False)))
    lse, exchange, board = (
        Candidate(t, w, "name", 1.0, 1, initials=i)
        for t, w, i in (
            ("LSE", ("lse",), ""),
            ("LondonStockExchange", ("london", "stock", "exchange"), "lse"),
            ("UKIndependenceParty", ("uk", "independence", "party"), "ukip"),
        )
    )
    assert lse.same(exchange) and exchange.same(lse) and not lse.same(board)
    assert Candidate("UKIP", ("ukip",), "name", 1.0, 1).same(board)


def test_a_name_said_once_in_passing_is_not_offered():
    ranked = candidates(TAKEOVER, limit=RANKED)
    quimby = [c for c in ranked if c.text == "PeterQuimby"]
    assert [c.passing for c in quimby] == [True], texts(ranked)
    assert "PeterQuimby" not in texts(offer(ranked, 2 * CANDIDATES, 2 * CANDIDATES))
    # the first paragraph is no passing mention, nor is anything in a short document
    assert not any(c.passing for c in ranked if c.text == "DeutscheBoerse")
    short = candidates(TAKEOVER.replace(TAKEOVER_TURN * 6, "").replace(TAKEOVER_TURN * 2, ""), limit=RANKED)
    assert [c.passing for c in short if c.text == "PeterQuimby"] == [False], texts(short)


def test_a_named_topic_takes_the_last_slot_from_a_weak_one():
    def term(t: str, s: float, kind: str = "term", said: int = 2) -> Candidate:
        return Candidate(t, tuple(tag_words("#" + t)), kind, s, said, said=said)

    names = [term(t, s, "name") for t, s in (("China", 3.5), ("Honda", 2.5))]
    ruling, rights = term("Ruling", 2.1), term("IntellectualProperty", 1.8, "phrase")
    assert (
        rights.named_topic
        and not ruling.named_topic
        and Candidate("FACup", ("fa", "cup"), "name", 1.0, 1).named_topic
    )
    assert not term("IntellectualProperty", 1.8, "phrase", said=1).named_topic
    offered = (*names, ruling, rights)
    plan = TagPlan("", frozenset(tag_key(c.text) for c in offered), offered, 3)
    assert plan.finish(["#China", "#Honda", "#Ruling"]) == ["#China", "#Honda", "#IntellectualProperty"]
    assert plan.finish(["#Ruling", "#China", "#Honda"]) == ["#Ruling", "#China", "#IntellectualProperty"]
    # a topic the ranking puts first or second names the story: it stays
    lead = (names[0], ruling, names[1], rights)
    plan = TagPlan("", frozenset(tag_key(c.text) for c in lead), lead, 3)
    assert plan.finish(["#China", "#Ruling", "#Honda"]) == ["#China", "#Ruling", "#Honda"]
    # the offer takes a named topic from below its list when it holds none
    ranked = [*names, ruling, *(term(f"Name{k}", 2.0 - 0.1 * k, "name") for k in range(8)), rights]
    assert offer(ranked, 10, 10)[-1] == rights and rights not in ranked[:10]


def test_a_repeated_phrase_names_its_head_and_a_names_short_form_is_no_person():
    doc = (
        "Campaign 'cold calls' questioned\n\n"
        'Parties still make marketing "cold calls" to voters. The World Anti-Doping Agency (Wada) and the '
        "watchdog will look at the calls.\n\n"
        "The calls go on, and calls to voters rose. Wada will say more about the calls; the calls cost "
        "money, and so do the watchdog's calls.\n"
    )
    got = {c.text: c for c in candidates(doc, limit=40)}
    # 'cold calls', said twice, stands for 'calls' (said eight times) in its place and score
    assert "ColdCalls" in got and "Calls" not in got, got
    assert got["ColdCalls"].score >= max(c.score for c in got.values() if c.kind == "term")
    # a capitalised prefix is the name's ('Anti-Doping'); the bracketed short form is no meeting's person
    assert "Wada" in got and not got["Wada"].person and not got["Wada"].listed, got
    assert got["Wada"].same(
        Candidate("WorldAntiDopingAgency", ("world", "antidoping", "agency"), "name", 1.0, 1, initials="wada")
    )
    assert not any(c.words == ("world", "doping", "agency") for c in got.values())
