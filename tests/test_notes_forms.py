"""Forms of real minutes and call notes that the summary's candidates and the hashtags read:
a list's last numbered item, a WordPress export's paragraphs, a HackMD page's house rules,
a radio club's call signs, a pandoc page's underlined attendee list. Text only, no model."""

from __future__ import annotations

from localsidecar.hashtags.generation import HashtagSettings
from localsidecar.hashtags.meeting import call_signs
from localsidecar.hashtags.names import name_runs
from localsidecar.hashtags.words import tokenize
from localsidecar.summary.blocks import content_blocks
from localsidecar.summary.candidates import candidates_and_blocks, document_candidates
from localsidecar.summary.outline import topics_line
from localsidecar.summary.people import listed_names
from localsidecar.summary.references import needs_antecedent


def names_of(doc: str) -> set[str]:
    """The document's name runs, each as its words written together."""
    return {"".join(t.text for t in r.words) for r in name_runs(tokenize(doc))}


FIRST_MEETING = """---
title: "Membership meeting (first!)"
---

(As always, you can [add the membership meeting to your calendar](http://example.org/cal) using the link.)

## Details

The very first meeting of the association.

### Minutes

  1. Call to order (7:00 PM)
  2. Agenda was approved unanimously. Brad moved, Hillary seconded.
  3. Brad talked about progress toward forming the nonprofit.
  4. Adjourn (7:32 PM)

Brad mentioned the web services he registered for the organisation:

  * ForwardEmail (a service for forwarding all messages to a domain name)
  * Paypal (for donations to the association)
"""


def test_the_last_numbered_item_of_a_list_is_no_title_of_what_follows():
    cands = document_candidates(FIRST_MEETING, notes=True)
    texts = [c.text for c in cands]
    assert not any(t.startswith("Adjourn") for t in texts), texts
    forward = next(t for t in texts if "ForwardEmail" in t)
    assert forward == "ForwardEmail (a service for forwarding all messages to a domain name)."
    titled = (
        "Memo\n\nPresent: Ana, Ben\n\n1. Release date\n\nThe group agreed to move the release to 22 April.\n"
    )
    assert [b.kind for b in content_blocks(titled)][-1] == "para"
    assert document_candidates(titled)[0].section == 1  # a numbered title above its paragraph still is one


def test_a_calendar_invitation_is_no_candidate():
    texts = [c.text for c in document_candidates(FIRST_MEETING, notes=True)]
    assert not any("calendar" in t for t in texts), texts
    assert any(t.startswith("The very first meeting") for t in texts)


WORDPRESS = (
    "---\ntitle: AGM 2014\n---\n<section>\n"
    "<p>The AGM took place on Wednesday, 26th March 2014 in a lively atmosphere.</p>\n"
    "<p>In his report, the chairman took members through the centenary year.</p>\n"
    "</section>\n"
)


def test_paragraph_tags_leave_the_space_between_sentences():
    texts = [c.text for c in document_candidates(WORDPRESS)]
    assert "In his report, the chairman took members through the centenary year." in texts
    assert not any("atmosphere.In" in t for t in texts), texts


HACKMD = """# Ambassadors - 13th March 2023

**Important information**

- Date/time: Monday 13th March 2023, 10:00-11:30 (GMT/UTC)
- Call recording: Shared with Ambassadors only, requires SSO

## Participants
(name / Pronouns / Department / ORCID)
1. Cassandra Gould van Praag / she/her / Psychiatry / 0000-0002-8584-4637
2. Lisa Spiering / she/her / Exp Psychology / 0000-0002-9071-6541

## Participation guidelines
- We welcome, support and respect each other as whole people.
- We do not tolerate harassment of members of our community in any form.

## 1. Setting up HackMD for the programme
- Peter to try and set this up ready for next week.

## 2. Success stories seminars
- Lisa to coordinate with Verena to set up the first seminar.
- Where will we host the speakers: book a room through the booking system.

## Feedback on this session
- Please add a few words to each of the sections below so we can improve.
"""


def test_participants_house_rules_and_the_feedback_form_are_no_candidates_nor_topics():
    cands, blocks = candidates_and_blocks(HACKMD, notes=True)
    texts = [c.text for c in cands]
    assert texts and all("Setting up HackMD" in t or "seminar" in t.lower() for t in texts), texts
    line = topics_line(cands, blocks)
    assert line is not None
    assert line.text == "Topics: Setting up HackMD for the programme; Success stories seminars."


def test_a_motion_carried_a_sentence_ending_on_them_and_an_opening_participle_lean_back():
    assert needs_antecedent("The motion was carried.")
    assert needs_antecedent("Dominion Rubber Stamp & Engraving will make them.")
    assert needs_antecedent("Once installed, the virtual terminal gets a chunk of the task to process.")
    assert not needs_antecedent("Once the software is installed, the terminal gets a chunk of the task.")
    assert not needs_antecedent("Builds queued for up to three hours while the team restored them.")
    assert not needs_antecedent("The motion to buy a 432 MHz antenna was carried.")
    assert not needs_antecedent("The members asked the secretary to order new name tags for all of them.")


RADIO_CLUB = """# Minutes, September 2022

| Name | Call sign | Grid |
| --- | --- | --- |
| Charles MacDonald | VA3CPY | FN25ag |
| Bert Bertrand | VE2ZAZ | FN25bk |

The meeting was opened by the President, Charles (VA3CPY) at 7:08 pm.

## Beacons

- Bert (VE2ZAZ) will recover the two beacons from the YMCA site. The beacons need new batteries.
- Lawrence (VA3IQ) will ask about the beacon tower. Beacons are the club's main project.

## Antenna

- The club will buy a 432 MHz antenna for the beacons.
"""


def test_a_radio_clubs_call_signs_are_its_people_not_tags():
    assert {"va3cpy", "ve2zaz", "va3iq", "fn25ag"} <= call_signs(RADIO_CLUB)
    assert (
        call_signs("The PS1NEO pipeline found 12 new near-Earth objects (PS1NEO) last week.") == frozenset()
    )
    tags = HashtagSettings().plan("", RADIO_CLUB).finish([])
    assert tags and not any(t[1:].upper() in {"VA3CPY", "VE2ZAZ", "VA3IQ", "FN25AG"} for t in tags), tags
    assert "#Beacons" in tags


PANDOC_MINUTES = """% Branch Meeting Minutes
% Dan Turner
% 08 May, 2013

Attendees
=========

  * Leanne Ainsworth (Cosette181)
  * Dan Turner (Tinned_Tuna)

Minutes
=======

### Election of Branch Treasurer

Dan Turner was nominated for the position of branch treasurer. Dan Turner was elected unopposed.
The branch will run a stall at the Pride festival. The stall needs flyers about digital rights.
"""


def test_an_underlined_attendee_list_names_the_meetings_people_and_they_are_no_tags():
    assert ("dan", "turner") in listed_names(PANDOC_MINUTES)
    tags = HashtagSettings().plan("", PANDOC_MINUTES).finish([])
    assert tags and "#DanTurner" not in tags, tags


def test_a_name_joined_by_and_is_one_name_when_said_whole_and_its_second_part_never_alone():
    doc = (
        "# Minutes: Quants and Quills annual general meeting 2019\n\n"
        "Welcome to the third general meeting. The records of Quants and Quills are open. The association "
        "ran ten meetups this year. On Sunday Chelsea and Manchester United drew, and Manchester United "
        "stay second. The meetups were sponsored by ThoughtWorks and the ABC.\n"
    )
    names = names_of(doc)
    assert "QuantsandQuills" in names
    assert "Quants" not in names and "Quills" not in names
    assert "Chelsea" in names and "ManchesterUnited" in names  # United is said alone
    assert "ThoughtWorksandtheABC" not in names and "ThoughtWorks" in names  # said together once
    assert "#QuantsAndQuills" in HashtagSettings().plan("", doc).finish([])


def test_the_call_to_order_and_the_minutes_approving_themselves_are_no_candidates():
    texts = [c.text for c in document_candidates(FIRST_MEETING, notes=True)]
    assert not any(t.startswith("Call to order") for t in texts), texts
    doc = "# Minutes\n\n**These minutes were approved by the membership at the following meeting.**\n\n" + (
        "The board agreed to register the association with the State of Michigan.\n"
    )
    assert [c.text for c in document_candidates(doc, notes=True)] == [
        "The board agreed to register the association with the State of Michigan."
    ]


def test_a_date_to_be_announced_is_no_part_of_a_name():
    doc = (
        "# National championships 2020\n\n"
        "**Time Trial Championship** - Sunday 13th September (Juniors & Older) TBA GWRT\n"
        "**Hill Climb Championship** - Sunday 27th September (Juniors & Older) TBA GWRT\n"
        "**Road Race Championship** - Sunday 9th August, Holt Circuit. GWRT\n"
    )
    names = names_of(doc)
    assert "GWRT" in names and not any("TBA" in n for n in names), names


def test_two_peoples_words_joined_by_and_before_a_name_are_the_names():
    doc = (
        "Dallaglio still hopes for a place on the British and Irish Lions tour to New Zealand this summer.\n"
    )
    names = names_of(doc)
    assert "BritishandIrishLions" in names and "IrishLions" not in names, names


TEAM_NOTES = """# Team meeting notes, 3 March

## Attendees
Ann, Bo, Cy

## Communication
The newsletter goes out on Fridays from now on.

##Potential partners
We should think about where we can get money from for the project.

## Planning
- GM #1 - 8/31
    - Thai food ordered for 60 people.
    - Similar to the welcome social, more about what we do.

### Subtyping refactor
Goal is to have the traits/subtyping code manage bounds.

### Review of actions
AI: Hugo to repeat the tests in 15199 and get new performance figures.
Done

AI: Matt to update the requirements document.
"""


def test_a_heading_without_a_space_after_its_marks_is_a_heading():
    cands = {c.text for c in document_candidates(TEAM_NOTES)}
    assert "Potential partners: We should think about where we can get money from for the project." in cands
    assert not any(c.startswith("Communication: We should think") for c in cands), cands


def test_a_unit_shows_a_title_it_names_only_in_part_or_that_has_no_words():
    cands = {c.text for c in document_candidates(TEAM_NOTES)}
    assert "GM #1 - 8/31: Similar to the welcome social, more about what we do." in cands, cands
    assert "Subtyping refactor: Goal is to have the traits/subtyping code manage bounds." in cands, cands


def test_an_action_the_notes_mark_done_says_so():
    cands = {c.text for c in document_candidates(TEAM_NOTES)}
    assert any(c.endswith("get new performance figures. Done.") for c in cands), cands
    assert not any(c.endswith("get new performance figures.") for c in cands), cands
    assert any(c.endswith("Matt to update the requirements document.") for c in cands), cands
