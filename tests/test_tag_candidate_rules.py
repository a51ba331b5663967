"""The hashtag candidate rules written against a blind judgement's weak and bad
tags (issue 33): whole names with their numbers and first names, one country
by one tag, no fragment of a phrase or a headline's verb, topics of common
nouns and events, and the headline's subject when the body backs it. No
model: candidates(), HashtagSettings.plan and TagPlan.finish alone."""

from __future__ import annotations

from dataclasses import replace

from localsidecar.hashtags.candidates import (
    CLEAR_LEAD,
    NAMED_TOPIC_FLOOR,
    RANKED,
    TOPIC_FLOOR,
    Candidate,
    Rules,
    candidates,
    clear_topic,
    offer,
)
from localsidecar.hashtags.document import read_document
from localsidecar.hashtags.generation import HashtagSettings, TagPlan, tag_key
from localsidecar.hashtags.headline import with_object, with_subject
from localsidecar.hashtags.mentions import collect
from localsidecar.hashtags.words import role_noun


def ranked(doc: str, rules: Rules = Rules()) -> dict:
    return {c.text: c for c in candidates(doc, limit=40, rules=rules)}


def finished(doc: str) -> list[str]:
    """The set TagPlan.finish gives when the model names nothing (the ranking's own pick)."""
    cands = tuple(offer(candidates(doc, "", RANKED), 10, 10))
    return TagPlan("", frozenset(tag_key(c.text) for c in cands), cands, 3).finish([])


def test_a_number_inside_a_capitalised_name_stays_in_it():
    doc = (
        "Wales win Six Nations opener\n\n"
        "Wales beat England in the opening game of the Six Nations on Saturday. The race on Channel 4 drew "
        "viewers and Channel 4 was pleased with Formula One and Formula One fans. Twelve Labour MPs "
        "rebelled. The score was Arsenal 2 Chelsea 1.\n"
    )
    got = ranked(doc)
    assert {"SixNations", "Channel4", "FormulaOne"} <= set(got), list(got)
    assert got["SixNations"].count == 2 and got["Channel4"].count == 2
    assert not {"Nations", "Channel", "Formula", "Arsenal2", "TwelveLabourMPs"} & set(got), list(got)
    assert "LabourMPs" in got  # a sentence-initial count is still no part of a name


def test_a_year_said_twice_after_of_and_a_name_is_the_names():
    doc = (
        "New York rockers top talent poll\n\n"
        "The Bravery have come top of the BBC's Sound of 2005 poll. Keane won Sound of 2004. Singer Sam "
        "Endicott said he felt great about coming top of the Sound of 2005 list. The Museum of 1900 opens.\n"
    )
    got = ranked(doc)
    assert "SoundOf2005" in got and got["SoundOf2005"].event and got["SoundOf2005"].topic, list(got)
    assert not {"Sound", "SoundOf2004", "MuseumOf1900"} & set(got) and "Museum" in got, list(got)


def test_a_first_name_the_dictionary_knows_stays_with_its_surname():
    doc = (
        "England lose in Dublin\n\n"
        "Mark Robinson said England would recover. Robinson added that the side was young. "
        "Robinson is the England coach.\n"
    )
    got = ranked(doc)
    assert "MarkRobinson" in got and "Robinson" not in got and "Mark" not in got, list(got)
    assert got["MarkRobinson"].count == 3 and got["MarkRobinson"].person
    # a dictionary word before a word said once is no first name: 'Watch Robinson'
    assert "WatchRobinson" not in ranked("Match report\n\nWatch Robinson play today.\n")


def test_one_country_by_several_names_is_one_candidate():
    doc = (
        "US economy slows\n\n"
        "The US economy grew less than expected. America is the biggest market and the United States "
        "will import more. Let us see. Britain and the UK's economy, and the United Kingdom's banks.\n"
    )
    got = ranked(doc)
    assert got["US"].count == 4 and not got["US"].person, list(got)
    assert got["UK"].count == 3
    assert not {"America", "UnitedStates", "Britain", "UnitedKingdom"} & set(got), list(got)


def test_a_phrase_cut_after_a_common_noun_modifier_is_none():
    twice = (
        "Strike threat\n\n"
        "Public sector unions will strike over pensions. The public sector unions said the strike "
        "would go ahead.\n"
    )
    got = ranked(twice)
    assert "PublicSectorUnions" in got and "SectorUnions" not in got, list(got)
    once = "Strike threat\n\nThe public sector unions said the strike would go ahead in May.\n"
    assert "SectorUnions" not in ranked(once)
    assert "SectorUnions" in ranked(once, Rules(common_cut=False))
    # a cut after an adjective of degree or a verb leaves a phrase: 'new pension scheme', 'cut winter deaths'
    kept = ranked("Pension news\n\nThe new pension scheme starts. The pension scheme is fair.\n")
    assert "PensionScheme" in kept, list(kept)


def test_a_verb_of_change_ends_no_phrase():
    doc = (
        "Unemployment rose\n\n"
        "UK unemployment rose to 5% in March. Youth unemployment rose by 2%. The claimant count fell. "
        "The pension age rises to 65.\n"
    )
    got = ranked(doc)
    assert not {"UnemploymentRose", "CountFell", "ClaimantCountFell", "Rises", "AgeRises"} & set(got), list(
        got
    )
    assert {"Unemployment", "ClaimantCount"} <= set(got)
    assert "UnemploymentRose" in ranked(doc, Rules(past_verb=False))
    verbs = ranked(
        "Apple news\n\nAnalysts said the gadget could lure users. Plans to store fuel rods grew.\n"
    )
    assert not {"LureUsers", "StoreFuelRods"} & set(verbs), list(verbs)


def test_a_lowercase_word_said_after_a_name_is_part_of_it():
    doc = (
        "Apple unveils cheaper Mac mini\n\n"
        "Apple has unveiled the Mac mini, a cheap computer. The Mac mini will cost $499. "
        "Analysts said the mini could sell well.\n"
    )
    got = ranked(doc)
    assert "MacMini" in got and not {"Mac", "Mini"} & set(got), list(got)
    assert got["MacMini"].count == 3 and not got["MacMini"].person
    assert {"Mac", "Mini"} <= set(ranked(doc, Rules(name_part=False)))
    # the headline names it: the name said alone too ('a Mac', 'Mac Format') does not part them
    brand = doc + "A Mac costs more. Mac Format liked it. The first Mac came in 1984.\n"
    assert "MacMini" in ranked(brand), list(ranked(brand))
    plain = brand.replace("Apple unveils cheaper Mac mini", "Apple unveils a cheap computer")
    assert "MacMini" not in ranked(plain), list(ranked(plain))
    # a word said without the name too is its own ('Saab factory', 'the factory'), and no title joins
    saab = ranked(
        "Saab plant\n\nThe Saab factory is old. The Saab factory may close. The factory employs 5,000 "
        "and the Swedish factory makes cars. The Norwegian striker and the Norwegian striker scored.\n"
    )
    assert "SaabFactory" not in saab and "Factory" in saab, list(saab)
    assert not {"NorwegianStriker", "SwedishFactory"} & set(saab) and saab["Striker"].kind == "term"
    # a country and a noun are two tags: 'US economy' beside 'America'
    us = ranked("US economy slows\n\nThe US economy grew. America is the biggest market.\n")
    assert "US" in us and "USEconomy" not in us, list(us)


def test_role_and_match_words_are_no_topic():
    assert role_noun("midfielder") and role_noun("midfielders") and role_noun("councillors")
    assert role_noun("defenseman") and role_noun("goaltenders") and role_noun("quarterback")
    doc = (
        "Chelsea beat Arsenal\n\n"
        "The midfielder scored twice in the encounter at Stamford Bridge. The midfielder said the "
        "encounter was hard. Chelsea lead the league.\n"
    )
    got = ranked(doc)
    assert not got["Midfielder"].topic and not got["Encounter"].topic, list(got)


def test_a_common_noun_phrase_or_an_event_is_the_topic():
    waste = (
        "Sellafield nuclear waste plan\n\n"
        "Plans to store nuclear waste at Sellafield in Cumbria have been put forward by the Nuclear "
        "Decommissioning Authority. The NDA said the nuclear waste would be held in a deep store. "
        "Campaigners in Cumbria said the site was unsafe. BNFL, which runs Sellafield, welcomed it.\n"
    )
    got = ranked(waste)
    assert got["NuclearWaste"].named_topic and "Waste" not in got, list(got)
    assert "#NuclearWaste" in finished(waste)
    assert "NuclearWaste" not in ranked(waste, Rules(adjective_phrase=False))
    # an adjective of degree makes no phrase: 'significant inroads'
    inroads = ranked("Car sales\n\nSaab made significant inroads. The significant inroads pleased Saab.\n")
    assert "SignificantInroads" not in inroads, list(inroads)
    court = (
        "Birmingham vote-rigging case: councillors face Election Court\n\n"
        "Six Labour councillors in Birmingham face an Election Court hearing over claims of vote-rigging "
        "in the city's council elections. Richard Mawrey QC, sitting as the Election Court judge, heard "
        "that postal votes were stolen. Mr Mawrey said the vote-rigging would disgrace a banana republic. "
        "The councillors deny the allegations.\n"
    )
    got = ranked(court)
    assert got["ElectionCourt"].topic and got["VoteRigging"].named_topic, list(got)
    assert not got["Councillors"].topic
    tags = finished(court)
    assert "#ElectionCourt" in tags and "#Councillors" not in tags, tags


def test_a_repeated_phrase_stands_for_the_word_it_mostly_modifies():
    doc = (
        "Pension strike threat\n\n"
        "Council workers will strike over pension changes. The pension strike would go ahead, said unions. "
        "The pension age rises to 65. A pension strike is planned.\n"
    )
    got = ranked(doc)
    assert "PensionStrike" in got and "Pension" not in got, list(got)
    # a word modifying several phrases keeps its own place: 'beta test', 'beta version', 'beta users'
    beta = ranked(
        "App memo\n\nThe beta is out. The beta test starts. The beta version is ready and beta users like it; beta users "
        "asked for more, and the beta feedback is good.\n"
    )
    assert "Beta" in beta and "BetaUsers" not in beta, list(beta)


def test_a_noun_said_only_before_other_nouns_names_the_domain():
    doping = (
        "Greek duo cleared in doping case\n\n"
        "Kostas Kenteris and Katerina Thanou were cleared of doping offences by a tribunal. The IAAF "
        "said a doping test was missed. Kenteris said the tribunal was fair. The IAAF doping review board "
        "will now consider the decision of the tribunal.\n"
    )
    got = ranked(doping)
    assert got["Doping"].kind == "term" and got["Doping"].topic and got["Doping"].count == 4, list(got)
    assert "Doping" not in ranked(doping, Rules(modifier_topic=False))
    # a word the dictionary knows only as an adjective needs one mention more: 'broadband'
    broadband = (
        "BT cuts prices\n\n"
        "BT will cut broadband prices for its rivals. Ofcom wants cheaper broadband services and BT said its "
        "broadband market share was falling. The broadband product is sold wholesale by BT.\n"
    )
    assert ranked(broadband)["Broadband"].topic, list(ranked(broadband))
    assert "Broadband" not in ranked(broadband.replace("The broadband product", "The product"))
    # a phrase said twice stands for its modifier: 'winter deaths', not 'winter'
    winter = (
        "Vouchers to cut winter deaths\n\n"
        "Pensioners would get vouchers to cut winter deaths. Winter deaths rose last year, and the winter "
        "fuel payment and winter fuel allowance are paid to pensioners.\n"
    )
    got = ranked(winter)
    assert "WinterDeaths" in got and "Winter" not in got, list(got)


def test_a_time_word_is_no_tag_nor_a_phrase_word():
    doc = (
        "Qantas considers offshore option\n\n"
        "Despite making a record profit last year, Qantas needs savings. The profit next year may fall, "
        "and Qantas said its profit was healthy.\n"
    )
    got = ranked(doc)
    assert not {"ProfitLast", "ProfitNext", "Last", "Next"} & set(got), list(got)
    assert got["Profit"].count == 3
    library = (
        "Library notes\n\n"
        "The library will stay open until 9 pm on weekdays and open on Sunday afternoons. Volunteers help "
        "on Sundays and at weekends, and the evening visits and weekend visits help the library.\n"
    )
    got = ranked(library)
    assert not {"Weekdays", "Afternoons", "Sundays", "Weekends", "WeekendVisits"} & set(got), list(got)
    assert {"Library", "Visits"} <= set(got)
    band = ranked(
        "Big Brother news\n\nBez of the Happy Mondays joined. The Happy Mondays played on Sundays.\n"
    )
    assert "HappyMondays" in band and not {"Happy", "Sundays"} & set(band), list(band)
    # a function word is no mention of a word of the same stem: 'willing' is not 'will'
    bakery = "Bakery closes\n\nThe bakery will close. It will sell the ovens; no bakers willing to work were found.\n"
    assert "Willing" not in ranked(bakery), list(ranked(bakery))


def test_uk_us_and_a_title_rank_lower_and_are_no_topic():
    doc = (
        "Blair ready to call election\n\n"
        "Prime Minister Tony Blair is ready to call an election in the UK. The prime minister said the UK "
        "economy was strong, and the US and the UK agreed. Michael Howard said the prime minister was "
        "wrong about the election campaign, and the election date.\n"
    )
    got = ranked(doc)
    assert got["UK"].generic and got["US"].generic and not got["UK"].topic, list(got)
    assert got["PrimeMinister"].generic and not got["PrimeMinister"].named_topic
    assert got["Election"].topic
    plain = ranked(doc, Rules(context_names=False))
    assert plain["PrimeMinister"].named_topic and not plain["UK"].generic
    assert abs(got["UK"].score - 0.6 * plain["UK"].score) < 1e-9  # ranked as a news story's generic term
    # the UK goes below the election; Blair, the headline's person, leads both
    order, plain_order = list(got), list(plain)
    assert plain_order.index("UK") < plain_order.index("Election"), plain_order
    assert order.index("Election") < order.index("UK"), order
    assert order[:2] == ["TonyBlair", "Election"], order
    assert "#PrimeMinister" not in finished(doc), finished(doc)


def test_a_term_said_once_in_passing_is_never_the_forced_topic():
    doc = (
        "Johnson too strong for GB runners\n\n"
        "Benita Johnson beat Hayley Yelling and Kathy Butler in Amorebieta. Johnson won by ten seconds from "
        "Edith Masai, with Yelling third and Butler fourth. Yelling said Johnson ran well. Butler said "
        "Johnson was strong. Masai, Butler and Yelling were among the attractions at Amorebieta.\n"
    )
    cands = candidates(doc, "", RANKED)
    low = [c for c in cands if c.text == "Attractions" and c.topic and c.count == 1]
    assert low and low[0].score < TOPIC_FLOOR * cands[0].score, [(c.text, c.score) for c in cands]
    assert not any(c.topic for c in cands if c is not low[0])
    tags = finished(doc)
    assert "#Attractions" not in tags and len(tags) == 3, tags


def test_an_ing_form_said_once_is_no_term_whatever_its_stem():
    doc = (
        "Juninho demand for O'Neill talks\n\n"
        "Juninho wants talks with Martin O'Neill. He will remain at Celtic and the club must remain calm, "
        "and his agent spoke for the remaining months. Juninho said Celtic would remain his club.\n"
    )
    assert "Remaining" not in ranked(doc), list(ranked(doc))
    roaming = "Phone bills\n\nUsers pay a lot for roaming. The EU wants a cap on roaming in Europe.\n"
    assert ranked(roaming)["Roaming"].topic, list(ranked(roaming))


def test_a_topic_far_ahead_of_every_other_stays_whatever_the_model_picks():
    doc = (
        "Tough rules for ringtone sellers\n\n"
        "Firms that sell ringtones must follow new rules. Ringtones are sold by Vodafone and other mobile "
        "networks. The rules say ringtones must be priced clearly, and Vodafone said ringtones sold well.\n"
    )
    cands = tuple(offer(candidates(doc, "", RANKED), 10, 10))
    assert cands[0].text == "Ringtones" and clear_topic(cands) is cands[0], [(c.text, c.score) for c in cands]
    plan = TagPlan("", frozenset(tag_key(c.text) for c in cands), cands, 3)
    assert plan.finish(["#Vodafone", "#Rules", "#Networks"]) == ["#Vodafone", "#Rules", "#Ringtones"]
    # no clear lead: the model's pick stands ('Rules', a common plural, is no topic: made one here)
    k = next(i for i, c in enumerate(cands) if c.text == "Rules")
    assert cands[k].generic and not cands[k].topic
    close = (*cands[:k], replace(cands[k], generic=False, score=cands[0].score / 1.4), *cands[k + 1 :])
    assert clear_topic(close) is None, [(c.text, c.topic) for c in close]


def headline_plan(doc: str) -> TagPlan:
    plan = HashtagSettings().plan("", doc)
    assert plan is not None
    return plan


def test_the_headline_names_its_subject_by_the_full_name_the_body_uses():
    doc = (
        "Hughes to be Lions adviser\n\n"
        "Former press chief Gareth Hughes will advise the Lions on their tour of New Zealand. The Lions "
        "squad leave for New Zealand in May, and the Lions coach said the tour would be hard. Hughes said "
        "he was proud to join the Lions. The tour ends in July and the Lions play three Tests.\n"
    )
    plan = headline_plan(doc)
    assert plan.subject is not None and plan.subject.text == "GarethHughes", plan.subject
    assert plan.subject in plan.candidates
    got = plan.finish(["#Lions", "#NewZealand", "#Tour"])
    assert "#GarethHughes" in got and "#Lions" in got and len(got) == 3, got
    assert "#Hughes" not in got
    # a person the headline names ranks among the first (headline_person), and the model's pick stands
    assert plan.subject.person and plan.subject in plan.candidates[:2]
    assert plan.finish(["#GarethHughes", "#Lions", "#NewZealand"])[:2] == ["#GarethHughes", "#Lions"]


def test_a_common_noun_or_phrase_the_body_repeats_is_the_headlines_subject():
    broadband = (
        "Broadband challenges TV viewing\n\n"
        "The number of Europeans with broadband has doubled, NetRatings says. People with broadband watch "
        "less TV, and broadband reaches a third of homes. NetRatings found TV viewing fell in France.\n"
    )
    assert "Broadband" not in ranked(broadband)  # the dictionary knows it as an adjective only
    plan = headline_plan(broadband)
    assert plan.subject is not None and plan.subject.text == "Broadband" and plan.subject.topic
    assert "#Broadband" in plan.finish(["#NetRatings", "#TV", "#France"])
    mobile = (
        "Mobile TV tipped to grow\n\n"
        "Operators in South Korea launched mobile TV last year. Handsets that show mobile TV sell well, "
        "and mobile phone makers see mobile TV as the next big thing for South Korea.\n"
    )
    plan = headline_plan(mobile)
    assert plan.subject is not None and plan.subject.text == "MobileTV", plan.subject
    # the subject takes the place of the tag it holds
    assert plan.finish(["#SouthKorea", "#Mobile", "#Handsets"]) == ["#SouthKorea", "#MobileTV", "#Handsets"]


def test_a_headline_word_the_body_does_not_back_is_no_subject():
    once = (
        "Greek pair set for hearing\n\n"
        "Kostas Kenteris and Katerina Thanou will face a tribunal. The pair missed drugs tests before the "
        "Athens Olympics, and the pair deny wrongdoing. Kenteris said he was innocent.\n"
    )
    assert headline_plan(once).subject is None  # 'pair' is too common to name a story
    said_once = (
        "Volcano drama erupts on screen\n\nThe BBC shows a drama about Vesuvius. Viewers liked the show.\n"
    )
    assert headline_plan(said_once).subject is None
    us_tv = (
        "US TV cuts scene from film\n\n"
        "A US TV network cut a scene from Dirty War. US TV watchdogs fine networks, and US TV channels are "
        "careful. The BBC made Dirty War.\n"
    )
    assert "USTV" in ranked(us_tv) and headline_plan(us_tv).subject is None  # where, not what
    no_headline = "Broadband grows. People with broadband watch less TV, and broadband is cheap."
    assert headline_plan(no_headline).subject is None
    longer = (
        "Top of the Pops leaves BBC One\n\n"
        "The new Top of the Pops will move to BBC Two. The new Top show keeps its chart, and Top of the Pops "
        "fans will still see the countdown. The BBC said Top of the Pops would keep its name.\n"
    )
    assert headline_plan(longer).subject.text == "TopOfThePops"  # the whole name, never '#Pops'


def test_a_name_runs_on_through_a_connector_and_the():
    doc = (
        "Top of the Pops leaves BBC One\n\n"
        "The new Top of the Pops will move to BBC Two. The new Top show keeps its chart, and Top of the Pops "
        "fans will still see the countdown. The Bank of the West and the Bank of England lent the money.\n"
    )
    found = ranked(doc)
    assert {"TopOfThePops", "BankOfTheWest", "BankOfEngland"} <= set(found)
    assert not {"Pops", "West", "TheWest"} & set(found)


def test_a_headline_name_never_ousts_the_sets_only_topic():
    def c(text, kind, score):
        return Candidate(text, (text.lower(),), kind, score, 3, said=3)

    yukos, yugansk, china, rosneft = (
        c(t, "name", s) for t, s in (("Yukos", 6), ("Yugansk", 4.4), ("China", 4), ("Rosneft", 2.3))
    )
    oil, deal = c("Oil", "term", 1.8), c("Deal", "term", 1.4)
    offered = [yukos, yugansk, rosneft, oil, deal, china]
    assert not oil.named_topic and oil.topic and clear_topic(offered) is None
    # 'China had role in Yukos split-up': China takes a name's place, #Oil stays
    assert with_subject([yukos, yugansk, oil], china, offered, 3) == [yukos, china, oil]
    # a subject that is a topic takes the last free place as before, and two topics leave one free
    assert with_subject([yukos, yugansk, oil], deal, offered, 3) == [yukos, yugansk, deal]
    assert with_subject([yukos, deal, oil], china, offered, 3) == [yukos, deal, china]


def test_a_name_the_text_calls_its_is_no_person_and_a_headline_name_leads():
    doc = (
        "Norland Telecom gets Lantern boost\n\n"
        "Growth at mobile network Lantern has lifted profits at owner Norland Telecom.\n\n"
        "Lantern enjoyed strong growth in the north, swelling its subscriber base. Norland Telecom is to buy "
        "the rest of Quillet, and Norland Telecom is consolidating its stake in Quillet. Norland Telecom said "
        "it would sell a stake. Dr Anna Berg of the regulator said the firm would cut its prices. Quillet "
        "makes routers.\n"
    )
    got = ranked(doc)
    # 'said' and a past verb ('enjoyed') are a company's too: a name the text calls 'its' is no person
    assert not got["NorlandTelecom"].person and not got["Lantern"].person, got
    assert got["AnnaBerg"].person  # 'said the firm would cut its prices': the firm's 'its', not hers
    off = ranked(doc, Rules(its_thing=False))
    assert off["NorlandTelecom"].person and off["Lantern"].person
    # both headline names lead, the company's network (a common word, 'lantern') before a body name
    assert list(got)[:3] == ["NorlandTelecom", "Lantern", "Quillet"], list(got)
    assert list(ranked(doc, Rules(headline_name=False)))[:3] == ["NorlandTelecom", "Quillet", "Lantern"]


def test_a_headline_name_said_mid_sentence_with_more_words_is_one_name():
    doc = (
        "Riverside Arts Awards honour soap\n\n"
        "A soap has won at the Riverside Arts Show Awards. Last year the Riverside Arts Award went to a drama, "
        "and in other Riverside Arts categories a comedy won.\n"
    )
    got = ranked(doc)
    # 'Riverside' opens 'Riverside Arts' mid-sentence: the headline's run keeps it, singular and plural are one
    assert "RiversideArtsAwards" in got and got["RiversideArtsAwards"].said == 2, list(got)
    assert got["RiversideArtsAwards"].event and list(got)[0] == "RiversideArtsAwards"
    assert not {"ArtsAwards", "RiversideArts", "Riverside", "RiversideArtsAward"} & set(got), list(got)
    assert "ArtsAwards" in ranked(doc, Rules(initial_prefix=False))


def test_a_person_the_headline_names_by_a_surname_ranks_first():
    doc = (
        "Denver return for Varga-Kovacs\n\n"
        "Olympic champion Petra Varga-Kovacs will return to action at the Denver Classic tournament.\n\n"
        "She has not played since the US Open and the French Open. Carlos Mendes, the Davis Cup hero, "
        "will also play at the tournament, and Mendes won the Davis Cup in Denver.\n"
    )
    got = ranked(doc)
    # the headline's surname is a mention of the full name, where it is said: the story is about her
    assert list(got)[0] == "PetraVargaKovacs" and got["PetraVargaKovacs"].person, list(got)
    assert got["PetraVargaKovacs"].count == 2
    assert list(ranked(doc, Rules(headline_person=False)))[0] == "Denver"


def test_a_portfolio_and_its_title_are_no_part_of_the_name_after_them():
    doc = (
        "Straw backs ending arms embargo\n\n"
        "UK Foreign Secretary Jack Straw has defended plans to end the arms embargo on China. "
        "Trade and Industry Secretary Patricia Hewitt said exports would rise. Mr Straw spoke in Beijing, "
        "where Jack Straw met ministers. Hewitt and Straw will report to the Bank of England Governor.\n"
    )
    got = ranked(doc)
    assert {"JackStraw", "PatriciaHewitt"} <= set(got), list(got)
    assert not [t for t in got if "Secretary" in t], list(got)
    assert got["JackStraw"].count >= 3


def test_the_headline_names_its_event_past_its_verb():
    doc = (
        "Parish urges Darrow gig boycott\n\n"
        "Parish councillors in Hollins Vale are trying to stop singer Marla Darrow playing at the Hollins "
        "Vale Arena, saying her songs are unfit for the town.\n\n"
        "Twelve councillors at the Vale Chapel asked residents to boycott the 4 June gig at the Hollins Vale "
        "Arena. Marla Darrow has sold two million albums, and her tour reaches Hollins Vale after Leeds. The "
        "Hollins Vale Arena said 3,000 tickets had been sold, and the arena's manager Tom Reade said the show "
        "would go ahead. Marla Darrow said she was sad. Tom Reade said the venue was booked a year ago.\n"
    )
    plan = headline_plan(doc)
    assert plan.event is not None and plan.event.text == "Boycott"  # said once more, as a verb
    assert "Boycott" in [c.text for c in plan.candidates]
    assert "Boycott" not in [c.text for c in candidates(doc, "", RANKED)]  # the body alone offers none
    picked = [c.text for c in plan.candidates if "boycott" not in c.words][:3]
    tags = plan.finish(picked)
    assert "#Boycott" in tags and len(tags) == 3 and tags[:2] == ["#" + t for t in picked[:2]], (picked, tags)
    # the headline's verb ('urges', said rarely in English) and common nouns ('show', 'ban') name no event
    assert headline_plan(doc.replace("gig boycott", "show ban", 1)).event is None
    # a set that holds a named topic keeps the model's pick
    named = replace(plan.event, text="GigBoycott", words=("gig", "boycott"), kind="phrase", said=2)
    assert with_object([plan.candidates[0], named], plan.event, None, plan.candidates, 3) == [
        plan.candidates[0],
        named,
    ]


def test_a_hyphenated_description_before_a_name_is_no_part_of_it():
    doc = (
        "Fit-again Korvald in Norway squad\n\n"
        "Norway have brought flanker Anders Korvald back into their squad for Saturday's game in Oslo. "
        "Korvald missed the autumn with a knee injury. The Anti-Doping Agency tested the whole squad, and "
        "the Anti-Doping Agency said every test was clear. Anders Korvald said he was ready.\n"
    )
    found = ranked(doc)
    assert "AndersKorvald" in found and "AntiDopingAgency" in found
    assert not any(t.startswith("FitAgain") for t in found), sorted(found)
    assert headline_plan(doc).subject.text == "AndersKorvald"


def test_one_name_spelt_two_ways_is_one_candidate():
    doc = (
        "# Signing spec meeting\n\n"
        "Attendees: Ravindra Kolhapure, Ravindre Kolhapure, Mark Dunne, Mary Dunne\n\n"
        "- Ravindra Kolhapure walked through the signature envelope proposal.\n"
        "- Ravindre Kolhapure will open a pull request for the envelope schema.\n"
        "- Mark Dunne and Mary Dunne asked for test vectors for the envelope.\n"
        "- The envelope schema is the next release's blocker; Ravindra Kolhapure owns it.\n"
    )
    texts = [c.text for c in candidates(doc, limit=40)]
    assert len({"RavindraKolhapure", "RavindreKolhapure"} & set(texts)) == 1, texts
    # a short first name that differs is another person
    assert {"MarkDunne", "MaryDunne"} <= set(texts), texts


def test_a_member_of_a_parliament_is_named_without_the_title():
    doc = (
        "Party loses second member\n\n"
        "The party has lost a second member in a week, after the departure of MEP Halvard Kroonsted. "
        "Labour MSP Orla Brennagh said the party was in trouble. Halvard Kroonsted said he had left "
        "for a new party, and Orla Brennagh said more would follow Halvard Kroonsted.\n"
    )
    found = ranked(doc)
    assert "HalvardKroonsted" in found and "OrlaBrennagh" in found, sorted(found)
    assert not any(t.startswith(("MEP", "Mep", "LabourMSP", "MSP")) for t in found), sorted(found)


def test_a_common_plural_is_no_topic_and_a_name_takes_its_place():
    doc = (
        "Kestrova seals deals with Varnholm\n\n"
        "Kestrova has signed three deals with Varnholm, the oil firm said. The deals cover "
        "pipelines and refineries, and more deals may follow. Spammers also targeted Varnholm's staff, "
        "and the spammers used fake invoices. Kestrova said Varnholm would pay for the pipelines.\n"
    )
    got = ranked(doc)
    assert got["Deals"].generic and not got["Deals"].topic  # 'deal' is common: any story counts deals
    assert got["Spammers"].topic and not got["Spammers"].generic  # a rare word's plural says what
    assert got["Pipelines"].topic  # 'pipeline' is under COMMON_PLURAL_ZIPF
    assert "#Deals" not in finished(doc), finished(doc)


def test_a_numbered_lines_first_word_a_month_abbreviation_and_an_attendee_are_no_tags():
    doc = (
        "Oct 27\n\n"
        "SUBJECT: Loomweave dev meeting minutes\n\n"
        "4533 - Need Brian to sign off on the linting change. Brian said the linting change is ready.\n"
        "4540 - Quarks: Patrick wants the quark tests to run in CI. Each attendee agreed; an attendee will "
        "write the quark test runner, and every attendee reviews it. Meeting again on Oct 30.\n"
    )
    found = ranked(doc)
    assert not any(t.startswith("Need") for t in found) and "Oct" not in found, sorted(found)
    assert "Attendee" not in found or found["Attendee"].generic  # the meeting's own business (was the first)
    assert "Quark" in found or "Quarks" in found, sorted(found)


def test_one_person_described_is_no_topic_a_group_may_be():
    doc = (
        "Kestrova and Varnholm sign oil pact\n\n"
        "Kestrova's petroleum minister Arvo Tamsalu signed an oil pact with Varnholm on Monday. The "
        "petroleum minister said the pact would cover pipelines. Varnholm's shareholders backed it, and "
        "the shareholders will vote again in May. Terror suspects held in Varnholm were freed, and the "
        "terror suspects left for Kestrova. The pipelines will carry oil from 2027, Tamsalu said.\n"
    )
    got = ranked(doc)
    assert got["PetroleumMinister"].generic and not got["PetroleumMinister"].topic  # who, not what
    assert got["Shareholders"].generic and not got["Shareholders"].topic
    assert got["TerrorSuspects"].topic  # a group may be what a story is about
    assert not {"#PetroleumMinister", "#Shareholders"} & set(finished(doc)), finished(doc)


def test_the_headlines_last_word_said_as_a_verb_is_no_event_and_somebody_is_no_tag():
    doc = (
        "Rock group Kestrel's guitarist quits\n\n"
        "The guitarist with rock band Kestrel has quit the music business after a religious awakening. "
        "Ben Marrow told a radio station that the band respected his decision to quit. Kestrel said it "
        "wanted somebody new by May, and somebody from Leeds had called. Kestrel sold two million albums.\n"
    )
    plan = headline_plan(doc)
    assert plan.event is None, plan.event  # 'has quit', 'to quit': the headline's verb
    assert "Quits" not in [c.text for c in plan.candidates]
    assert "Somebody" not in [c.text for c in candidates(doc, "", RANKED)]
    # a last word said as a noun names the event ('released eight patches')
    patches = (
        "Vantor releases bumper patches\n\n"
        "Vantor has released eight patches for its Halden browser. The patches fix flaws that let hackers "
        "take over a computer, and Vantor said users should install the patches by Friday.\n"
    )
    event = headline_plan(patches).event
    assert event is not None and event.text == "Patches", event


def test_a_verb_opening_a_line_is_no_first_name():
    doc = (
        "# Solvane board minutes\n\n"
        "**Motion**: Reappoint Monica Harte as Vice Chair through March 2021.\n\n"
        "**Motion**: Reappoint Monica Harte as treasurer of the Solvane workshops.\n\n"
        "**Motion**: Reduce Solvane workshop fees for students. Monica Harte seconded.\n"
    )
    got = ranked(doc)
    assert not [t for t in got if t.startswith(("Reappoint", "Reduce"))], list(got)
    assert "MonicaHarte" in got and "Solvane" in got, list(got)


def test_a_rugby_position_is_a_title_and_a_match_named_aid_is_an_event():
    doc = (
        "Charvis set to lose fitness bid\n\n"
        "Flanker Colin Charvis is unlikely to play again in this season's Six Nations. "
        "Charvis has missed all three of Wales' victories with an ankle injury. "
        "Replacement hooker Robin McBryde remains a doubt, and prop Matt Stevens is fit. "
        "Charvis will instead captain the Northern team in the IRB Rugby Aid match at Twickenham, "
        "a fund-raising game for the tsunami appeal. Tickets for the IRB Rugby Aid match sold out.\n"
    )
    got = ranked(doc)
    assert "ColinCharvis" in got and "FlankerColinCharvis" not in got
    assert "RobinMcBryde" in got and "MattStevens" in got
    assert got["IRBRugbyAid"].event and got["IRBRugbyAid"].named_topic


def test_a_verbs_ing_form_in_the_headline_is_no_event_and_a_far_better_topic_beats_one_in_passing():
    doc = (
        "Sprinter denies faking road crash\n\n"
        "Greek sprinter Nikos Varelas has denied claims that he faked a motorbike crash to avoid a doping "
        "test. Varelas said faking a crash was never his plan, and asked to be tested in hospital after the "
        "motorbike crash. Police are investigating the crash.\n"
    )
    plan = headline_plan(doc)
    assert plan.event is None, plan.event  # 'faking': the dictionary's verb form, no event
    assert "Faking" not in [c.text for c in plan.candidates]
    lawsuit = (
        "Oliveira takes on Northwind\n\n"
        "Singer Marta Oliveira has filed a lawsuit against the record label Northwind over unpaid royalties. "
        "The lawsuit says Northwind kept royalties from three albums. Oliveira's lawsuit asks for $5m in "
        "royalties. Northwind denies it, and Northwind's lawyers say Northwind paid every royalty it owed. "
        "Northwind's boss Paul Hendry said the claims, made in a television programme, were false "
        "and that the television programme had not asked the label for comment.\n"
    )
    cands = tuple(offer(candidates(lawsuit, "", RANKED), 10, 10))
    by_text = {c.text: c for c in cands}
    assert by_text["TelevisionProgramme"].named_topic and not by_text["TelevisionProgramme"].event
    assert by_text["Royalties"].score >= CLEAR_LEAD * by_text["TelevisionProgramme"].score
    assert by_text["TelevisionProgramme"].score < NAMED_TOPIC_FLOOR * cands[0].score  # said in passing
    plan = TagPlan("", frozenset(tag_key(c.text) for c in cands), cands, 3)
    got = plan.finish(["#MartaOliveira", "#Northwind", "#PaulHendry"])
    assert got == ["#MartaOliveira", "#Northwind", "#Royalties"], got


def test_a_speaker_the_attendance_list_names_is_no_tag_and_that_list_no_headline():
    doc = (
        "attending: ajeffrey, jdm, paul, simonsapin\n\n"
        "ajeffrey: most things have ground to a halt, but we can make progress on the build farm.\n\n"
        "Ajeffrey: Since we are all newbies, I will set up the build farm account with Netlify.\n\n"
        "Simonsapin: I wrote some words about the pros and cons of each build farm.\n\n"
        "Finance: the build farm costs 40 dollars a month.\n"
    )
    read = read_document(doc)
    assert read is not None
    assert {"ajeffrey", "simonsapin"} <= read.handles and "finance" not in read.handles  # not in the list
    assert read.headline_line == -1  # a list of who attended is no headline
    titled = "Minutes: Greenfield Community Garden committee, 3 March\n\nThe committee approved the budget.\n"
    assert read_document(titled).headline_line == 0  # 'Minutes: <meeting>' is its title


def test_an_ordinal_opens_a_name_of_two_words():
    doc = (
        "News group bids for film studio\n\n"
        "News Corporation owns 82% of the company, home to the 20th Century Fox film studio. "
        "Analysts said 20th Century Fox had its best year of the 21st Century, and News Corporation "
        "wants the rest of the studio.\n"
    )
    got = ranked(doc)
    assert "20thCenturyFox" in got and "CenturyFox" not in got, list(got)
    assert "21stCentury" not in got


def test_a_participle_after_a_plural_noun_opens_no_phrase_and_a_rank_is_a_title():
    doc = (
        "Security papers found in street\n\n"
        "An inquiry is under way after files containing security details about the president's "
        "visit were found. Gen Pervez Musharraf met Tony Blair. Police said Gen Pervez Musharraf's "
        "security was never at risk. Ministers also discussed high mobile roaming charges.\n"
    )
    got = ranked(doc)
    assert not any(t.startswith("Containing") for t in got), list(got)
    assert "PervezMusharraf" in got and "GenPervezMusharraf" not in got, list(got)
    found = collect(read_document(doc))
    assert "p:containingsecurity" not in found and "p:roamingcharges" in found, list(found)


def test_a_place_said_alone_is_not_a_later_mention_of_an_x_of_y_name():
    doc = (
        "Tsunami costs emerging\n\n"
        "Thailand, Sri Lanka and India were worst hit. Thailand's prime minister estimated the "
        "destruction at 20bn baht, and analysts said Thailand's tourist industry would be hardest "
        'hit. Sri Lanka\'s growth may slow. "We should rebuild 70% of the damage," said the '
        "governor of the Tourism Authority of Thailand.\n"
    )
    got = ranked(doc)
    assert got["Thailand"].count == 3, list(got)  # before: 'Thailand' counted as the Authority's
    assert "TourismAuthorityOfThailand" not in got or got["TourismAuthorityOfThailand"].count == 1
    # said once outside the name (a headline's 'Glasgow trial'), the place may be the name
    once = "Glasgow trial halves admissions\n\nA study led by the University of Glasgow found the vaccine works.\n"
    assert "Glasgow" not in ranked(once) and ranked(once)["UniversityOfGlasgow"].count == 2


def test_an_event_named_up_front_takes_the_place_of_the_place_it_is_held_at():
    doc = (
        "Radcliffe will compete in London\n\n"
        "Paula Radcliffe will compete in the Flora London Marathon this year.\n\n"
        "She won the race in London in 2002 and returned to London a year later. London is very "
        "special to me, said Radcliffe, who also won the Boston Marathon and the race in Chicago.\n\n"
        + "The course starts in the park and finishes by the river after a long climb.\n\n"
        * 25
    )  # past PASSING_WORDS, where a name said once past the lead is said in passing
    got = ranked(doc)
    assert "FloraLondonMarathon" in got and "London" not in got, list(got)
    assert got["FloraLondonMarathon"].score >= got["BostonMarathon"].score
    # in passing (neither headline nor lead, once), an event leaves the place alone
    later = (
        doc.replace("in the Flora London Marathon", "in London")
        .replace("the Boston Marathon", "in Boston")
        .replace("and the race in Chicago", "and the race in Chicago, not the Flora London Marathon")
    )
    assert "London" in ranked(later), list(ranked(later))


def test_a_preposition_opens_no_phrase():
    doc = (
        "Renault boss hails great year\n\n"
        "Strong sales outside western Europe helped Renault. Demand outside western Europe rose, and "
        "growth came mainly from outside western Europe. Talks amid rising costs went on throughout March.\n"
    )
    found = collect(read_document(doc))
    assert not any(k.startswith(("p:outside", "p:amid", "p:throughout")) for k in found), list(found)
    assert "OutsideWestern" not in ranked(doc)


def test_a_phrase_of_a_day_part_or_a_superlative_and_a_verb_s_ing_form_are_no_topics():
    doc = (
        "REM concerts hit by illness\n\n"
        "Bassist Mike Mills was taken to hospital suffering from flu. The band had been suffering from "
        "fatigue. The afternoon session was cancelled; the afternoon session will be held later. "
        "'He was the best person for the job,' a spokesman said of the best person on the tour.\n"
    )
    got = ranked(doc)
    assert not {"AfternoonSession", "BestPerson", "Suffering", "HospitalSuffering"} & set(got), list(got)
    assert "MikeMills" in got and "Flu" in got, list(got)


def test_an_office_alone_is_no_name():
    doc = (
        "Residents meet the council\n\n"
        "The Deputy Chairman opened the meeting. The Deputy Chairman said the Treasurer had the accounts. "
        "The Vice Chair asked about the playing field. The Deputy Chairman and the Treasurer will visit "
        "the playing field with the Borough Council.\n"
    )
    got = ranked(doc)
    assert not {"DeputyChairman", "ViceChair", "Treasurer"} & set(got) and "BoroughCouncil" in got, list(got)


def test_a_headline_s_praise_is_no_subject_and_a_name_starts_after_mr():
    doc = (
        "'Best person' for top legal job\n\n"
        "The 'best person' should be the Lord Chancellor, said the Tory MP Dominic Grieve. "
        "Peers debated the Constitutional Reform Bill. The best person for the job was debated by peers. "
        "Earlier Mr Kennedy said the Constitutional Reform Bill was rushed. Mr Kennedy spoke at length.\n"
    )
    plan = HashtagSettings().plan("", doc)
    texts = [c.text for c in plan.candidates]
    assert not {"BestPerson", "EarlierMrKennedy"} & set(texts), texts
    assert "ConstitutionalReformBill" in texts and (plan.subject is None or plan.subject.text != "BestPerson")


def test_a_pundit_and_a_bookmaker_are_roles_no_topic():
    assert role_noun("pundit") and role_noun("pundits") and role_noun("bookmakers") and role_noun("filmmaker")
    assert not role_noun("documentaries") and not role_noun("allowances")
    doc = (
        "Actor Scott is new Bond favourite\n\n"
        "Dougray Scott is the favourite to be the next James Bond, bookmaker William Hill said. "
        "One bookmaker cut the odds, and another bookmaker followed. James Bond fans placed bets. "
        "The pundit said a pundit had tipped Dougray Scott.\n"
    )
    got = ranked(doc)
    assert not any(c.topic for t, c in got.items() if t in {"Bookmaker", "Pundit"}), list(got)


def test_an_acronym_of_a_topic_phrase_is_that_topic_once():
    """'PCs' and 'personal computers' are one tag, the acronym a topic; on the code before,
    the set was #WesternPC #PCs #PersonalComputers (round 23's PC ownership article)."""
    doc = (
        "PC ownership to 'double by 2010'\n\n"
        "The number of personal computers worldwide is expected to double by 2010, says Forrester. "
        "Most of the growth in PCs will come from China, India and Russia, the study says. Dell and HP "
        "will face local rivals as PCs get cheaper. In China, PCs are sold by local vendors, and "
        "about 1.3bn PCs will be in use. Sales of personal computers in Russia are rising too. Dell and HP "
        "sell fewer PCs there.\n"
    )
    pcs, mps = (Candidate(t, (t.lower(),), "name", 2.0, 4) for t in ("PCs", "MPs"))
    phrase = Candidate(
        "PersonalComputers", ("personal", "computers"), "phrase", 1.5, 2, initials="pc", said=2
    )
    assert pcs.acronym == "pc" and pcs.same(phrase) and phrase.same(pcs) and not mps.same(phrase)
    got = ranked(doc)
    assert "PersonalComputers" not in got and got["PCs"].topic  # the phrase it stands for made it one
    tags = finished(doc)
    assert "#PCs" in tags and "#PersonalComputers" not in tags, tags


def test_a_topic_the_headline_says_is_not_displaced_by_a_named_topic():
    """Round 23: "Connors boost for British tennis" lost #Tennis to #LongTermRelationship, a
    phrase the story says twice; the headline's topic names the story."""
    doc = (
        "Connors boost for British tennis\n\n"
        "Former world number one Jimmy Connors is planning a long-term relationship with the Lawn Tennis "
        "Association to help unearth the next Tim Henman. The American spent three days at the LTA's camp "
        'in La Manga. "The more involved I can be with the LTA, the better," said Connors. LTA chief '
        'John Crowther said: "We hope this is the beginning of a good long-term relationship." Connors '
        "worked with the coaches and the players. The LTA wants more of him in tennis.\n"
    )
    offered = candidates(doc, "", RANKED)
    tennis = next(c for c in offered if c.text == "Tennis")
    assert tennis.headline and tennis.topic and not tennis.named_topic
    relationship = next(c for c in offered if c.text == "LongTermRelationship")
    assert relationship.named_topic and not relationship.headline
    tags = finished(doc)
    assert "#Tennis" in tags and "#LongTermRelationship" not in tags, tags


def test_a_clergyman_styled_rt_rev_is_a_person():
    doc = (
        "No royal succession shake-up\n\n"
        "Peers debated the royal succession on Friday. The Bishop of Winchester, the Rt Rev Michael "
        "Scott-Joynt, said it would separate the state from the Church. Peers also heard from Lord Dubs. "
        "The royal succession rules date from 1701, and peers said the succession should not change.\n"
    )
    got = ranked(doc)
    assert got["MichaelScottJoynt"].person, got["MichaelScottJoynt"]


def test_a_name_the_text_calls_by_a_rare_last_word_is_a_person_the_model_may_not_add():
    """Round 23: the model's pick put #AndyRoddick (the loser of the rubber, 'Roddick battled
    hard') where the ranking's #Spain had been. A name of capitalised words whose rare last
    word is said alone is surnamed; the model's pick of one below the ranking's first three
    gives way, as a person's does. 'Davis Cup' ('the Cup') is no person."""
    doc = (
        "Moya clinches Cup for Spain\n\n"
        "Spain won the Davis Cup for the second time when Carlos Moya beat the USA's Andy Roddick in "
        "Seville. Moya won in three sets to give Spain an unassailable lead in the Davis Cup. Roddick "
        "battled hard and had chances, but Moya's clay-court skill proved the difference. Spain last "
        "won the Cup in 2000. Roddick said Spain deserved it, and Moya said Seville was incredible.\n"
    )
    cands = tuple(offer(candidates(doc, "", RANKED), 10, 10))
    got = {c.text: c for c in cands}
    assert got["AndyRoddick"].surnamed and got["CarlosMoya"].surnamed and not got["DavisCup"].surnamed
    plan = TagPlan("", frozenset(tag_key(c.text) for c in cands), cands, 3, subject=got["CarlosMoya"])
    top = [c.text for c in cands[:3]]
    assert "AndyRoddick" not in top, top
    tags = plan.finish(["#DavisCup", "#AndyRoddick", "#CarlosMoya"])
    assert "#AndyRoddick" not in tags and "#DavisCup" in tags and "#CarlosMoya" in tags, tags


def test_a_name_a_title_or_a_role_describes_after_a_comma_is_a_person():
    """Round 24 (held out; written after it): #FidelisNanga, a journalist quoted, beside
    #Cameroon #Salary. A name whose rare last word is followed by a comma and a title or a
    role is a person; a company so described is not ('Deutsche Bank, the German lender')."""
    doc = (
        "Salary scandal in Cameroon\n\n"
        "Cameroon says corruption in its finance ministry has cost it 1bn CFA francs a month. About 500 "
        "officials are accused of claiming salaries for non-existent workers. Fidelis Nanga, a journalist "
        "based in Yaounde, said the government would act. Ian Shepherdson, chief economist at a bank, said "
        "the payroll audit was overdue. Deutsche Bank, the German lender, said salaries were paid.\n"
    )
    got = ranked(doc)
    assert got["FidelisNanga"].person and got["IanShepherdson"].person, (
        got["FidelisNanga"],
        got["IanShepherdson"],
    )
    assert not got["DeutscheBank"].person


def test_a_person_by_full_name_is_no_tag_of_meeting_notes():
    """Round 24's notes (held out): #JeffEbert, the sale's manager, and persons named in the
    notes were judged weak beside what the meeting decided. Of notes, a name shaped as a
    person's (a rare surname the dictionary does not know) is no tag, the model's pick nor
    the ranking's; a place or a thing of two words is ('Trim Trail', 'Python Mondays'). A
    roll call's voters ("Bret – yes") and a question's asker ("...? - Moctar") are people."""
    notes = (
        "---\ntitle: Directors' Meeting Minutes\n---\n\n"
        "Members present: Glen Jones, Diane Hermann, Mark Meurer\n\n"
        "## Sale Committee report\n\n"
        "- Moved by Diane that Jeff Ebert manage the national sale at 10% commission. Motion passed.\n"
        "- Jeff Ebert will send the sale letter to consignors. The national sale is on June 18.\n"
        "- The Trim Trail fund reached its target and Python Mondays start again in June.\n"
        "- Consignors pay 1% above the commission charged by Jeff Ebert for the national sale.\n"
        "- Mark – yes, Glen - no, Bret – yes, Diane – yes. Motion passed for the national sale.\n"
        "- Is there a cross-check with the sale letter? - Moctar\n"
        "- Bret and Moctar will check the sale letter with the consignors before June.\n"
    )
    plan = HashtagSettings().plan("", notes)
    got = {c.text: c for c in plan.candidates}
    assert plan.notes and got["JeffEbert"].person_shaped, sorted(got)
    assert not any(got[k].person_shaped for k in ("TrimTrail", "PythonMondays") if k in got)
    assert "#JeffEbert" not in plan.finish(["#JeffEbert", "#NationalSale"])
    assert "#JeffEbert" not in plan.finish([])
    assert "Bret" not in got and "Moctar" not in got, sorted(got)  # a roll call's voter, a question's asker
    article = notes.replace("---\ntitle: Directors' Meeting Minutes\n---\n\n", "Sale record\n\n")
    assert not HashtagSettings().plan("", article.replace("## ", "").replace("- ", "")).notes


def test_front_matter_is_read_as_its_title_and_its_prose_only():
    """Round 25's notes (held out; written after it): `#TabTitle` came from a YAML comment
    ('#  title: "Overrides the tab title"'), and round 24's `#Blurb`, `#Layout` from front
    matter keys; a site's settings are no text. Of front matter only the title (the
    headline) and its prose (description, blurb) are read. A date opening a title is no
    headline subject ('2017-05-17 Face to Face Meeting'), and a clerk is a title
    ('Clerk Linda Britton')."""
    doc = (
        "---\nlayout: news_item\nauthors:\n  - brad-czerniak\n"
        '#  title: "Overrides the tab title and social titles"\n'
        "blurb: The directors finalised plans for the national sale.\n"
        'title: "2017-05-17 Directors meeting"\n---\n\n'
        "The national sale will take place on June 18. Clerk Linda Britton will post the sale letter.\n\n"
        "Consignors pay 1% above the commission for the national sale. The sale letter was amended.\n"
    )
    got = {c.text for c in candidates(doc, "", RANKED)}
    assert "NationalSale" in got, sorted(got)
    assert not got & {"Layout", "Authors", "TabTitle", "Blurb", "ClerkLindaBritton", "BradCzerniak"}, sorted(
        got
    )
    assert "LindaBritton" in got, sorted(got)
    plan = HashtagSettings().plan("", doc)
    assert plan.subject is None or any(ch.isalpha() for ch in plan.subject.text), plan.subject
    assert not any(t.strip("#").isdigit() for t in plan.finish([])), plan.finish([])
