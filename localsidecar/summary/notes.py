"""What meeting notes, minutes, retros and status reports say (text only): the lines and
titles that mark a notes-shaped document, the headings and words of decisions and actions,
and a meeting's running order (summary.candidates uses them; docs/summaries.md, Extract of
meeting notes)."""

from __future__ import annotations

import re

AGENDA = re.compile(r"^agenda\W*$", re.IGNORECASE)
# sections whose items are what was decided or is to be done
CUE_SECTIONS = re.compile(
    r"^(key )?(decisions?( made)?|actions?( items| points)?|action items|outcomes?|resolutions?|"
    r"next steps|agreed|agreements?|conclusions?|summary|follow[- ]ups?|to ?dos?)\W*$",
    re.IGNORECASE,
)
# a meeting's running order, not what it was about ("Carol facilitating, Mark taking notes",
# "No questions this week"), and the notes' words about themselves
LOGISTICS = re.compile(
    r"\b(taking notes|takes notes|facilitating|roll call|turn (on|off) (the )?recording)\b|"
    r"^\d+ [\w ]{0,30}\b(present|attending|in attendance)\.?$|"
    r"^no (questions|updates?|other business|objections)\b[\w ]{0,20}\.?$"
    # the meeting or the notes about themselves ("Please add yourself", "This is what we'll
    # cover", "The following notes were scraped from ...", "The meeting took place virtually")
    r"|\badd (yourself|your name)\b|\bwhat we('ll| will) (cover|discuss)\b|"
    r"\bwe('ll| will) (read|go) through (these|this|them)\b|\b(following|these) notes (were|are)\b|"
    r"\bmeeting took place (virtually|online|via|over|by)\b|"
    r"\bnotes (were )?taken (during|at|in)\b|"
    # a template's words about its sections ("This is a place to make announcements", "60 second
    # updates on things you have been up to", "Copy previous action items from last meeting agenda")
    r"\bthis is (also )?(a|the) (great |good )?place (to|for)\b|\bthings you have been (up to|working on)\b|"
    r"\badd (an? )?(new )?(agenda )?items? (here|under|below|to|by)\b|^join us (on|at|via|in)\b|"
    r"\bcopy (the )?(proposed |previous )?(agenda|action items)\b|"
    # the meeting's procedure ("Chair Jerdonek called the meeting to order at 6:07 p.m.", "Member
    # Hage so moved, Chair Jerdonek seconded.", "The meeting is open to CG members only.")
    r"\bcall(?:ed|s)? (the meeting |the session )?to order\b|\b(meeting|session) (was |is )?adjourned\b|^adjourned\b|"
    # "Quorum was met (8 out of 15 members were present).", "Quorum was confirmed."
    r"^(the )?quorum (was|is|has been) (met|reached|achieved|confirmed|present|satisfied)\b|"
    # "Once again, the Interim Finance Committee would like to give you some updates on ..."
    r"\bwould like to (give|share with|bring) you (some |an? |the )?(updates?|news|overview)\b|"
    r"\b(a )?(video|recording) of the (meeting|call|session) is available\b|"
    # "Nat concluded the FAPI Working Group meeting at 9:50AM CST."
    r"\b(concluded|closed|ended|wrapped up) the ([\w-]+ ){0,5}(meeting|call|session)\b|"
    # "The Chairs wrapped up the meeting and the call concluded.", "Meeting started immediately
    # following the monthly members meeting."
    r"\b(the )?(meeting|call|session) (concluded|ended|closed)\.?$|"
    # "Meeting start: Previous meeting minutes was approved by @sjn", "2024-10-02 17:00 UTC on Matrix"
    r"\bmeeting (start|starts|started|end|ends|ended)\s*:|"
    r"\b(previous|last|these) (meeting'?s? )?minutes (was|were|are|is|have been|has been) (approved|accepted|adopted)\b|"
    r"^\d{4}-\d{2}-\d{2},? \d{1,2}:\d{2}\b|"
    r"^(the )?(meeting|call|session) (started|began|opened|commenced) (immediately |right |just )?"
    r"(after|following|at)\b|"
    r"\bso moved\b|^[\w .,'-]{0,40}\bseconded\.?$|^(present|absent|attending|apologies|regrets)\s*:|"
    r"\bmeeting is open to\b|\bvolunteers? for note[- ]?taking\b|"
    r"\b(meeting|call) will be (held )?(on|via|over|in) (a |the )?(zoom|video|google meet|jitsi|teams|webex)\b|"
    # a cover e-mail's words about the meeting ("Thanks to everyone who attended the sc-dev
    # meeting!", "The next meeting is planned for ...", "A meeting time poll will be sent out",
    # "respond to this thread or email me privately")
    r"\bthanks? (to )?(everyone|everybody|all|you all)\b[\w ]{0,12}\b(attend|join|came|come|participat)|"
    r"\bthank you (all )?for (your|the) time\b|"
    r"\bnext (meeting|call|sync) (is|was|will be) (planned|scheduled|held|set)\b|\b(meeting )?time poll\b|"
    r"\b(respond|reply) to this (thread|e-?mail|message)\b|\bminutes (of the meeting )?are below\b|"
    # a greeting ("Hello! Welcome to the monthly update.", "Welcome to this week's meeting")
    r"^welcome to (the|our|this|another|a new)\b[\w\s'’-]{0,30}\b(update|newsletter|report|meeting|call|sync|edition|issue|digest|recap)\b",
    re.IGNORECASE,
)
# in notes also where a new statement starts after a comma ("..., and to use £3,000 from reserves")
NOTES_CLAUSE = re.compile(r";|\s[—–-]\s|,\s(?:while|but|which|and|so|because|with|after|before|until)\b|:\s")
# a line that only minutes and notes have: attendance, agenda, actions
NOTES_LINE = re.compile(
    r"^[#*\s]*(present|attendees|attendance|attending|in attendance|apologies|absent|regrets|"
    r"facilitator|chair|minutes|minutes taken by|note taker|scribe|agenda|action items|actions|decisions)\b"
    r"[*\s]*(:|$)",
    re.IGNORECASE | re.MULTILINE,
)
# a line that introduces a list of what was weighed, not chosen ("Several options have been
# discussed:", "Possible approaches:"): its items are options (Candidate.option)
OPTIONS_INTRO = re.compile(
    r"\b(options?|alternatives?|possibilities|possible (?:solutions?|approaches?|ways?)|scenarios?|"
    r"approaches (?:were|are) (?:discussed|considered|proposed))\b[^:]*:\s*$",
    re.IGNORECASE,
)
NEXT_MEETING = re.compile(r"\bnext (meeting|call|sync)\b", re.IGNORECASE)  # a date, not a decision
NOTES_TITLE = re.compile(
    r"\b(minutes|notes|retro|retrospective|stand-?up|sync|meeting summary|office hours|"
    r"(status|activity|progress|monthly|weekly) report|"
    r"(community|video|conference|team|steering|working group) call)\b|"
    r"\bmeeting\b.*\d{4}|\d{4}-\d\d-\d\d\b.*\bmeeting\b",
    re.IGNORECASE,
)
# a key of a notes page's front matter ("chair: Victor", "apologies:", "agenda:")
NOTES_KEY = re.compile(
    r"^(attendees|attendance|present|apologies|absent|regrets|chair|facilitator|note[_ -]?takers?|scribe|"
    r"agenda|quorum)\s*:",
    re.IGNORECASE | re.MULTILINE,
)
# what was decided, agreed or is to be done ("Anna to ping Myles", "The committee agreed ...")
CUE = re.compile(
    r"\b(agreed|agrees|decided|decides|decision|approved|approves|accepted|adopted|elected|"
    r"re-elected|voted|resolved|concluded|consensus|no objections?|will|won't|shall|"
    r"action items?|next steps?|moving ahead|move forward|deadline|due|postponed|"
    r"launched|released|shipped|landed|merged|completed?|finished|"
    r"(?:[A-Z][\w.-]+|everyone|we) to [a-z]+)\b|^AI:",
)
# the strongest of those: what was decided, or a task given to someone ("CJ to make a call to
# vote", "Discuss: Eric to share goals", "[Action - Lee] Write up a draft plan", "AI: Mustafa
# to file an issue"; the one given it opens the unit or follows a label, not "... pushing
# Foundation to make some proposals")
DECISION = re.compile(
    r"(?i:\b(agreed|decided|decides|approved|approves|accepted|accepts|adopted|adopts|elected|re-elected|voted|"
    r"resolved|concluded|conclusion|consensus|rejected|no objections?|seconded|motion (?:passe[sd]|carried)|"
    r"unanimous(?:ly)?|(?:was|were|been) (?:passed|carried)|outcome\s*:)|"
    r"^\(?(AI|action|todo|motion)\s*:|\[action\b)|"
    r"(?:^|(?<=[:,\])-] ))(?:(?!(?:Need|Needs|Plan|Plans|Want|Wants|Have|Has|Had|Going|Try|Able|Ready|Hard|Easy|Nice|Good|"
    r"Time|Way|Seems|Likely|Possible|Needed|Start|Begin|Continue|Up|Due|Back|Next)\b)[A-Z][\w.-]+|everyone|we) to (?!be\b)[a-z]+\b"  # "CJ to make ..."
)
# the outcome of a vote or a proposal told in a few words ("Unanimously Rejected.", "This was
# agreed.", "Carried.", "Passed 5-0.")
OUTCOME = re.compile(
    r"\b(agreed|approved|accepted|adopted|rejected|declined|passed|carried|defeated|"
    r"failed|withdrawn|unanimous(ly)?)\b",
    re.IGNORECASE,
)
# headings that name no topic: a section of every meeting's notes, not what it was about
GENERIC_HEADINGS = re.compile(
    r"^(\W*)(meeting )?(notes?|minutes|agenda( items)?|your agenda items|general( topics| discussion)?|"
    r"discussions?( items| topics)?|topics?|other topics|open discussion|need (a )?decisions?|"
    r"need(s)? attention.*|decisions? needed|action items?|actions?|updates?|[\w -]{1,30} updates|"
    r"status( updates?)?|announcements?|news|other( business| items| points| topics)?|date|time|location|"
    r"date, time and location|any other business|a\.?o\.?b\.?|"
    r"new business|old business|unfinished business|misc(ellaneous)?|open (prs|pull requests|issues|items)|"
    r"(check[ -]in on )?previous action items|last meeting|\d+ meetings? ago|move to (the )?issue tracker|"
    r"summary|overview|highlights|introductions?|welcome|housekeeping|administrivia|roll ?call|details|"
    r"follow[- ]ups?|next steps|q ?& ?a|questions|contributors|items|review|reports?|non-agenda( items)?)\W*$",
    re.IGNORECASE,
)
