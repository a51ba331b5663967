"""Hashtag candidates of meeting notes: a meeting's people by login or first
name, its markup and its own business are no tags; its topics are. No model:
candidates() alone, each rule against the same notes with it switched off."""

from __future__ import annotations

from localsidecar.hashtags.candidates import Rules, candidates
from localsidecar.hashtags.document import read_document
from localsidecar.hashtags.meeting import own_sites
from localsidecar.hashtags.names import is_tag_name
from localsidecar.hashtags.words import tokenize
from localsidecar.summary.people import given_names, handles_and_speakers, listed_initials, listed_names

GOVERNANCE = """# Meeting Notes: Governance, Mar 12 2019

Governance meeting held Mar 12 2019 @ 3PM in [grin/Lobby on Gitter](https://gitter.im/grin_community/Lobby).

## Attendees

* antiochp
* yeastplume
* ignopeverell

## Agenda

### 1. Funding

* @hashmap asked whether @yeastplume's campaigns count as income. @yeastplume's funding is handled by him.
* _antiochp:_ I have secured funding for three months to work on the vulnerability disclosure process.
* _ignopeverell:_ The disclosure went well; the vulnerability fix shipped quickly.
* _yeastplume:_ The disclosure policy should say who hears first. Funding of the disclosure work continues.
* _antiochp:_ Yeastplume and ignopeverell agree. @antiochp will draft the disclosure policy.

### 2. Treasury

* _yeastplume:_ Treasury donations go to the vulnerability bounty. <br>
* @antiochp asked about hedging the treasury; hedging is postponed.
"""

RETRO = """# Team retro

- [Pavish] Fewer distractions, and the installer shipped.
- [Mukesh] Issues were not specced out when the installer was written.
- [Mukesh] User feedback tracking is hard; the installer needs feedback.
- [Pavish] The installer release slipped by a week.
- [DECIDED] Track installer feedback in one board.
- [ACTION] Mukesh to set up the feedback board.
"""


def texts(doc: str, rules: Rules = Rules()) -> list[str]:
    return [c.text for c in candidates(doc, limit=12, rules=rules)]


def test_handles_and_quoted_speakers_are_people_not_labels():
    assert handles_and_speakers(GOVERNANCE) == {"hashmap", "yeastplume", "antiochp", "ignopeverell"}
    # a bracketed label is read as a speaker here; the hashtag rule keeps only people
    assert {"pavish", "mukesh", "decided", "action"} == handles_and_speakers(RETRO)
    assert read_document(RETRO).handles == {"pavish", "mukesh"}  # '[DECIDED]', '[ACTION]': words
    # bold labels are topics ("**Scalafix**: ..."), code is code, a link's text is no speaker
    other = (
        "- **Scalafix**: Jon hopes for releases.\n- `@deprecated: message`\n- [Docs](https://x.y) moved.\n"
    )
    assert handles_and_speakers(other) == frozenset()


def test_a_meetings_logins_are_no_tags_and_its_topics_move_up():
    on, off = texts(GOVERNANCE), texts(GOVERNANCE, Rules(handles=False))
    logins = {"Yeastplume", "Antiochp", "Ignopeverell"}
    assert off[0] == "Yeastplume", off
    assert not logins & set(on), on
    assert {"Vulnerability", "Funding"} <= set(on[:6]), on
    # 'disclosure' before process, policy and work: the term, or its phrase said twice
    assert {"Disclosure", "DisclosurePolicy"} & set(on[:6]), on
    retro_on, retro_off = texts(RETRO), texts(RETRO, Rules(handles=False))
    assert {"Pavish", "Mukesh"} & set(retro_off) and not {"Pavish", "Mukesh"} & set(retro_on), retro_on
    assert retro_on[0] == "Installer", retro_on


def test_urls_html_and_link_targets_are_no_words():
    linked = (
        "Release plan\n\nSee [the plan](https://example.org/Tracker/Roadmap) and www.example.org/Roadmap.\n"
        * 3
    )
    assert "Roadmap" in texts(linked, Rules(markup=False)) and "Roadmap" not in texts(linked), texts(linked)
    row = '<tr class="row"><td class="cell">The {} was approved.</td></tr>\n'
    table = "Board votes\n\n<table>" + row.format("budget") + row.format("audit") + "</table>\n"
    assert texts(table, Rules(markup=False))[:2] == ["TrClass", "TdClass"], texts(table, Rules(markup=False))
    assert texts(table) == ["Audit", "Budget"], texts(table)
    spanning = 'Chat in the forum.\n\n<a href="http://discuss.example.org" class="external-link"\n  rel="nofollow">forum</a>\n'
    assert "Href" in texts(spanning * 2, Rules(markup=False)) and "Href" not in texts(spanning * 2)
    # a tag across two lines keeps the lines after it where they were: the headline stays first
    assert read_document(spanning).toks[-1].line == read_document(spanning, Rules(markup=False)).toks[-1].line
    licensed = "<!--\nSPDX-License-Identifier: CC-BY-SA-4.0\n-->\n\n## Avionics working group\n\nThe avionics survey is due.\n"
    assert "CCBYSA4" in texts(licensed, Rules(markup=False)) and "CCBYSA4" not in texts(licensed), texts(
        licensed
    )
    assert texts(licensed)[0] == "AvionicsWorkingGroup"  # the heading, no longer the comment, is the headline


def test_a_date_is_no_name_and_a_meetings_business_no_topic():
    assert not [t for t in texts(GOVERNANCE) if t.startswith("Mar")], texts(GOVERNANCE)
    name = tokenize
    assert not is_tag_name(name("Mar 12")) and not is_tag_name(name("12 March 2019"))
    assert is_tag_name(name("Channel 4")) and is_tag_name(name("May Day"))  # a name, not a date
    votes = (
        "Board minutes\n\nAttending: board.\n\nThe budget passed: 5 yeas, 0 nays. TBD: the budget review.\n"
        * 2
    )
    assert not {"Yeas", "Nays", "TBD", "Attending"} & set(texts(votes)), texts(votes)
    assert texts(votes)[0] == "Budget"


def test_a_listed_persons_first_name_alone_is_no_tag():
    notes = (
        "# TSC meeting minutes\n\n"
        "## Attendees\n\n"
        "TSC members\n\n"
        "- [x] [Basil Hess (IBM Research)](https://example.org/bhess)\n"
        "- [x] [Vlad Gheorghiu (softwareQ Inc.)](https://example.org/vsoftco)\n\n"
        "Other attendees\n\n"
        "- Hart Montgomery (LF)\n\n"
        "## Release\n\n"
        "Basil noted the release of liboqs is due. Basil suggested a grant for the release work. "
        "Basil confirmed the grant covers liboqs testing. Vlad agreed and Basil will write the grant "
        "proposal. Hart said the liboqs release notes are ready.\n"
    )
    texts = {c.text for c in candidates(notes, "", 40)}
    assert "Liboqs" in texts and "Grant" in texts, texts  # a word the notes write in lower case stays
    assert not {"Basil", "Vlad", "Hart"} & texts, texts
    assert given_names(notes) == {"basil", "vlad", "hart"}


def test_people_a_meeting_lists_by_full_name_rank_below_its_topics():
    roll = (
        "# Hackspace meeting minutes #\n\n"
        "## Roll ##\n"
        "Dmitriy V., John C., Joy B.(remote), Lance C.\n\n"
        "## Old Business ##\n"
        " * Lance C. will run the tutorials. Lance C. has the soldering kit for the tutorials.\n"
        " * John C. and Dmitriy V. booked the hall. Dmitriy V. pays for the bylaws filing.\n"
        " * Joy B. and Lance C. want more tutorials; the bylaws are adopted.\n"
        " * Tasks: certificates to print @Keegan Rimmington, workshop room @Keegan Rimmington.\n"
    )
    assert listed_names(roll) == {
        ("dmitriy", "v"),
        ("john", "c"),
        ("joy", "b"),
        ("lance", "c"),
        ("keegan", "rimmington"),
    }
    ranked = [c.text for c in candidates(roll, "", 10)]
    people = [p for p in ranked if p in {"LanceC", "JohnC", "DmitriyV", "KeeganRimmington"}]
    # before: LanceC (said 4 times) first, the roll's people not known as people
    assert people and ranked.index("Bylaws") < min(map(ranked.index, people)), ranked


def test_an_agenda_item_naming_the_roll_lists_no_one_and_a_dash_gives_an_affiliation():
    notes = (
        "# Agenda\n\n- Roll Call\n- Brief Notices\n- Action Items\n\n"
        "# Roll Call\n\n## Attended this meeting\n\n"
        "- Steve VanderLeest – Boeing\n- Shuah Khan – Linux Foundation\n\n"
        "# Brief Notices\n\nThe survey paper is due.\n"
    )
    assert listed_names(notes) == {("steve", "vanderleest"), ("shuah", "khan")}
    # a deeper heading goes on listing only when it names people ("## Attended this meeting")
    topics = "# Attendees\n\n- Alice Smith\n\n## Budget Review\n\n- Carol Lee\n- Budget Review done.\n"
    assert listed_names(topics) == {("alice", "smith")}


MINUTES = """SFRA Meeting Minutes

Minutes of Committee Meeting held on 12 April 2005

1\\. Present: Brian Harrison (Chairman), Ray Thompson (Deputy Chairman). Tim Read (Treasurer), \
Committee members: Guy de Montfort. Alan Whitford.

2\\. Village Design Statement (VDS): BH agreed to take the VDS to the parish meeting. GdM and RT \
to draft the questionnaire on the VDS. BH and GdM will count the replies. RT to ask the school \
about the questionnaire. GdM and RT will print the VDS. BH thanked GdM.
"""


def test_minutes_name_the_people_they_list_by_their_initials():
    # a numbered "1\. Present:", names parted by ". ", a label inside the list, a particle
    assert listed_names(MINUTES) == {
        ("brian", "harrison"),
        ("ray", "thompson"),
        ("tim", "read"),
        ("guy", "de", "montfort"),
        ("alan", "whitford"),
    }
    assert {"bh", "rt", "gdm", "gm", "tr", "aw"} == listed_initials(MINUTES)
    texts = [c.text for c in candidates(MINUTES, "", 10)]
    assert "VDS" in texts[:3] and not {"BH", "GdM", "RT"} & set(texts), texts
    # without the rule the initials are the minutes' most said names
    before = [c.text for c in candidates(MINUTES, "", 10, Rules(handles=False))]
    assert {"BH", "GdM"} <= set(before), before


def test_a_list_of_participants_gives_its_initials_and_its_escaped_names():
    notes = (
        "# Minutes of the working group\n\n"
        "Participants (voting members in bold):\n\n"
        "* **Ilkka Rinne (IR)**\n* Hylke van der Schaaf (by proxy to Sylvain)\n* **Sylvain Grellet (SG)**\n\n"
        "### **Present:**\n\n* Elisa Beshero\\-Bondar (EBB, Chair)\n* Joshua Abbott (ABB)\n\n"
        "## 1. Registries\n\nSG noted progress on the registries. IR asked SG about the registries. "
        "SG agreed. EBB and SG will write up the registries issue. ABB hosts the registries.\n"
    )
    assert listed_names(notes) == {
        ("ilkka", "rinne"),
        ("hylke", "van", "der", "schaaf"),
        ("sylvain", "grellet"),
        ("elisa", "beshero-bondar"),
        ("joshua", "abbott"),
    }
    initials = listed_initials(notes)
    assert {"ir", "sg", "ebb", "hvds", "hs"} <= initials and "abb" not in initials  # ABB: Abbott's company
    texts = [c.text for c in candidates(notes, "", 10)]
    assert not {"SG", "IR", "EBB"} & set(texts) and "ABB" in texts, texts
    assert "VotingMembers" not in texts and "Registries" in texts, texts  # the label line says who came


def test_a_heading_s_verb_before_a_name_is_no_first_name():
    notes = (
        "# Governance meeting\n\n- we want clear gitlab issues to vote on\n\n"
        "### Review GitLab issues:\n  - [Refine the onboarding process](https://gitlab.com/x/issues/140)\n"
        "  - [Common cooking](https://gitlab.com/x/issues/142)\n\n"
        "### Onboarding\n- the onboarding of visitors needs a host\n- more onboarding documentation on Gitlab\n"
    )
    texts = [c.text for c in candidates(notes, "", 10)]
    assert "ReviewGitLab" not in texts and "GitLab" in texts, texts


def test_a_title_in_capitals_shows_its_dictionary_words_as_written_elsewhere():
    notes = (
        "STOKE FERRY RESIDENTS' ASSOCIATION Committee Minutes\n\n"
        "The Association met the council. The council recognised the Association as an association "
        "of residents. The INSPIRE registry and the INSPIRE schemas were discussed with the association.\n"
    )
    texts = [c.text for c in candidates(notes, "", 10)]
    assert "Association" in texts and "ASSOCIATION" not in texts, texts
    assert any(t.startswith("INSPIRE") for t in texts), texts  # an acronym the notes write only so


def test_the_site_notes_link_to_most_names_whose_notes_they_are():
    notes = (
        "---\ntitle: Lessons learned after the congress\n---\n\n"
        "We held a meetup after the congress. The meetup agreed on the voucher process and the padawan roles.\n\n"
        "The voucher process needs a padawan. The padawan helps with the voucher process at the congress.\n\n"
        "The notes are at https://pad.hackeriet.no/40C3 and the list at https://wiki.hackeriet.no/vouchers. "
        "Many Hackeriet members came. Sponsors were found on https://www.bilkollektivet.no for the Signal groups.\n"
    )
    assert own_sites(notes) == {"hackeriet"}
    texts = [c.text for c in candidates(notes, "", 5)]
    assert "Hackeriet" in texts[:3], texts
    before = [c.text for c in candidates(notes, "", 5, Rules(own_site=False))]
    assert "Hackeriet" not in before[:3], before
    # a code host's account is the site; a site linked once, or a platform, names no one
    assert own_sites(
        "https://gitlab.com/kanthaus/public/issues/1 https://gitlab.com/kanthaus/public/issues/2"
    ) == {"kanthaus"}
    assert (
        own_sites("https://github.com/a/b https://zoom.us/j/1 https://zoom.us/j/2 https://okfn.org") == set()
    )


def test_a_first_name_and_an_initial_is_someone_and_a_time_zone_is_no_tag():
    notes = (
        "# Scrum call notes\n\nThu 12 March, 15:00 UTC (16:00 CET)\n\n"
        "## Testing toolkit\n\n- Sam K: the testing toolkit release is ready. Sam K will demo it.\n"
        "- Lewis D. asked about the testing toolkit on the INSPIRE O&M schema. Sam K agreed.\n"
        "- The INSPIRE O&M schema needs a testing toolkit update. Next call Thu 15:00 UTC.\n"
    )
    texts = [c.text for c in candidates(notes, "", 10)]
    assert not {"SamK", "LewisD", "UTC", "CET", "Thu"} & set(texts), texts
    assert "TestingToolkit" in texts[:3] and "INSPIREOM" in texts, texts


def test_reference_links_are_markup_and_a_wrapped_list_of_people_goes_on():
    notes = (
        "[LisaLister]: /Friends/LisaLister\n[BillWerling]: /Friends/BillWerling\n"
        "[SarahCallbeck]: /Friends/SarahCallbeck\n[NancyAndrew]: /Friends/NancyAndrew\n\n"
        "# Minutes for Meeting for Worship with a Concern for Business\n\n"
        "In Attendance: [Lisa Lister][LisaLister], [Bill Werling][BillWerling],\n"
        "[Sarah Callbeck][SarahCallbeck] and [Nancy Andrew][NancyAndrew]\n\n"
        "1. The library collection was reviewed. [Sarah Callbeck][SarahCallbeck] will sort the library "
        "collection. The library collection needs shelves. The worship committee thanked "
        "[Nancy Andrew][NancyAndrew] for the library collection.\n"
    )
    assert listed_names(notes) == {
        ("lisa", "lister"),
        ("bill", "werling"),
        ("sarah", "callbeck"),
        ("nancy", "andrew"),
    }
    texts = [c.text for c in candidates(notes, "", 10)]
    assert "LibraryCollection" in texts[:2], texts
    assert not {"SarahCallbeck", "NancyAndrew", "LisaLister"} & set(texts[:3]), texts
