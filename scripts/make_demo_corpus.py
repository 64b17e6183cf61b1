#!/usr/bin/env python3
"""Generate the deterministic Astrolabe Search demo corpus.

The corpus is composed from per-topic sentence banks with a fixed seed, so running this script
twice produces byte-identical output. Nothing is downloaded; only the standard library is used.

Usage:
    python scripts/make_demo_corpus.py [--output PATH]

Each output line is one JSON document (sorted keys, UTF-8) following the API contract:
doc_type, doc_id, title, content, owner, modified_at, file_path, tags, category, mime_type, acl.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeAlias

SEED = 42
DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "app" / "demo" / "corpus.jsonl"

Doc: TypeAlias = dict[str, str | list[str] | None]

DOC_TYPE_COUNTS: tuple[tuple[str, int], ...] = (
    ("file", 135),
    ("note", 75),
    ("deck_card", 45),
    ("news_item", 45),
)
ID_PREFIX: dict[str, str] = {"file": "f-", "note": "n-", "deck_card": "card-", "news_item": "news-"}
# The same doc_id string used under two different doc_types (tests that identity is per type).
SHARED_IDS: tuple[tuple[str, str, str], ...] = (
    ("1001", "file", "note"),
    ("1002", "deck_card", "news_item"),
    ("1003", "note", "deck_card"),
)

OWNERS: tuple[str, ...] = ("alice", "bob", "carol", "dave", "erin")
TAG_VOCABULARY: tuple[str, ...] = (
    "urgent",
    "finance",
    "draft",
    "review",
    "personal",
    "idea",
    "meeting",
    "travel",
    "infra",
    "security",
    "research",
    "archive",
)
NOTE_CATEGORIES: tuple[str, ...] = ("Work", "Personal", "Ideas", "Recipes", "Travel")
START = datetime(2024, 1, 1, tzinfo=UTC)
END = datetime(2026, 11, 20, tzinfo=UTC)

LONG_MIN_WORDS = 300
LONG_MAX_WORDS = 600
MAX_SENTENCES = 12
# Probability that a document of the given type is a long, multi-chunk document.
LONG_PROBABILITY: dict[str, float] = {
    "file": 0.22,
    "note": 0.10,
    "deck_card": 0.0,
    "news_item": 0.10,
}
# Sentence count range for ordinary (not long) documents.
SENTENCE_RANGE: dict[str, tuple[int, int]] = {
    "file": (3, 12),
    "note": (2, 9),
    "deck_card": (2, 4),
    "news_item": (3, 8),
}
FILE_EXTENSIONS: tuple[tuple[str, str, int], ...] = (
    (".md", "text/markdown", 60),
    (".txt", "text/plain", 25),
    (".html", "text/html", 15),
)
OTHER_MIME: dict[str, tuple[tuple[str, int], ...]] = {
    "note": (("text/markdown", 60), ("text/plain", 40)),
    "deck_card": (("text/markdown", 70), ("text/plain", 30)),
    "news_item": (("text/plain", 70), ("text/markdown", 30)),
}

# Values substituted into the {slots} of titles, sentences and folder templates.
PROJECTS = ("Apollo", "Borealis", "Cobalt", "Driftwood", "Ember", "Falcon", "Granite", "Helios")
QUARTERS = ("Q1", "Q2", "Q3", "Q4")
PEOPLE = (
    "Alice",
    "Bob",
    "Carol",
    "Dave",
    "Erin",
    "Priya",
    "Marcus",
    "Lena",
    "Tomás",
    "Yuki",
    "Femi",
    "Ingrid",
)
TEAMS = ("Platform", "Payments", "Search", "Mobile", "Data", "Growth")
SERVICES = (
    "checkout-api",
    "search-indexer",
    "auth-gateway",
    "billing-worker",
    "notification-service",
    "document-store",
)
CUSTOMERS = (
    "Northwind Traders",
    "Globex",
    "Initech",
    "Contoso Health",
    "Blue Harbor Logistics",
    "Vandelay Imports",
)
CAMPAIGNS = (
    "Spring Launch",
    "Back to School",
    "Summer Search",
    "Holiday Glow",
    "Developer Week",
    "Find It Fast",
)
CITIES = (
    "Lisbon",
    "Kyoto",
    "Reykjavik",
    "Vancouver",
    "Edinburgh",
    "Oaxaca",
    "Tallinn",
    "Zürich",
    "Porto",
    "Ljubljana",
)
DISHES = (
    "lentil soup",
    "mushroom risotto",
    "chickpea curry",
    "shakshuka",
    "pumpkin soup",
    "vegetable lasagne",
    "black bean chili",
)
PLANTS = ("tomatoes", "runner beans", "sweet peas", "dahlias", "sunflowers", "climbing beans")
TARGETS = (
    "the Andromeda Galaxy",
    "the Orion Nebula",
    "Jupiter",
    "Saturn",
    "the Pleiades",
    "the Ring Nebula",
    "the Hercules Cluster",
)
LECTURES = (
    "thermodynamics",
    "special relativity",
    "quantum mechanics",
    "electromagnetism",
    "classical mechanics",
)
BOOKS: tuple[tuple[str, str], ...] = (
    ("Thinking, Fast and Slow", "Daniel Kahneman"),
    ("The Design of Everyday Things", "Don Norman"),
    ("Deep Work", "Cal Newport"),
    ("The Pragmatic Programmer", "Andrew Hunt and David Thomas"),
    ("Atomic Habits", "James Clear"),
    ("Designing Data-Intensive Applications", "Martin Kleppmann"),
    ("The Mythical Man-Month", "Fred Brooks"),
    ("Sapiens", "Yuval Noah Harari"),
)
GOALS = ("half marathon", "10K race", "trail half marathon", "spring marathon", "charity 10K")


def _bank(text: str) -> tuple[str, ...]:
    """Split a block of blank-line separated sentences and collapse the line wrapping."""
    return tuple(" ".join(chunk.split()) for chunk in re.split(r"\n\s*\n", text.strip()))


@dataclass(frozen=True)
class Topic:
    """One subject area: its sentence bank, titles and the metadata that fits it."""

    key: str
    titles: tuple[str, ...]
    sentences: tuple[str, ...]
    folders: tuple[str, ...]
    tags: tuple[str, ...]
    categories: tuple[str, ...]
    acl_groups: tuple[str, ...] = ()
    card_titles: tuple[str, ...] = ()
    news_titles: tuple[str, ...] = ()

    def title_templates(self, doc_type: str) -> tuple[str, ...]:
        """The titles for a doc_type: deck cards and news items have their own (or none)."""
        if doc_type == "deck_card":
            return self.card_titles
        if doc_type == "news_item":
            return self.news_titles
        return self.titles


TOPICS: tuple[Topic, ...] = (
    Topic(
        key="finance_report",
        titles=(
            "{quarter} {year} Finance Report",
            "Quarterly Results Summary {quarter} {year}",
            "{quarter} {year} Revenue and Margin Review",
            "{team} Quarterly Financials {quarter} {year}",
        ),
        news_titles=(
            "Company posts {pct} percent revenue growth in {quarter} {year}",
            "{quarter} {year} results: margins improve as hosting costs fall",
            "Finance update: cash flow positive again in {quarter}",
        ),
        folders=("/Finance/{year}/{quarter}", "/Finance/Reports", "/Archive/Finance/{year}"),
        tags=("finance", "review", "meeting", "urgent"),
        categories=("Work",),
        acl_groups=("group:finance",),
        sentences=_bank(
            """
            This report summarizes financial performance for {quarter} {year}, covering revenue,
            gross margin, operating expenses, and cash flow compared with both the previous quarter
            and the same period last year.

            Total revenue grew {pct} percent quarter over quarter, driven mainly by subscription
            renewals in the enterprise segment and a stronger than expected uptake of the annual
            billing plan.

            Gross margin improved by about two points because hosting costs per customer fell after
            the {team} team consolidated several underused database clusters.

            Operating expenses came in slightly above forecast, largely because of one-off legal
            fees and the earlier than planned start dates of several new hires in sales.

            Accounts receivable rose sharply near the end of the quarter, so the finance team is
            chasing {num} overdue invoices, the largest of which belongs to {customer}.

            Free cash flow was positive for the third consecutive quarter, which gives us room to
            fund the hiring plan without drawing on the credit facility.

            Churn among small business customers remains the weakest part of the picture, with net
            revenue retention in that segment dipping below one hundred percent.

            We recognized {big_amount} in deferred revenue this quarter as multi-year contracts
            signed last year moved into their delivery periods.

            Foreign exchange movements reduced reported revenue by roughly one percent, mostly
            because the euro weakened against the dollar during the final month of the quarter.

            The board asked for a clearer breakdown of customer acquisition cost by channel, so next
            quarter's report will split paid search, partnerships, and outbound sales.

            Compared with the annual plan, we are ahead on revenue but behind on margin, and the
            forecast for the full year has been adjusted accordingly.

            {person} will walk through the variance analysis at the quarterly business review,
            focusing on the three line items that moved more than ten percent.

            All figures in this summary are unaudited and may change once the external accountants
            complete their quarter-end review of revenue recognition.

            Looking at the segments in more detail, enterprise revenue grew fastest thanks to three
            large expansions, mid-market was roughly flat after a slow first month, and the
            self-serve tier added more new accounts than in any previous quarter even though the
            average contract value there keeps shrinking.

            On the cost side, payroll rose in line with the hiring plan, marketing spend was lower
            than budgeted because two events were postponed, and cloud hosting came in under
            forecast for the first time this year thanks to the reserved capacity we committed to in
            the spring.

            The cash position at the end of {quarter} was comfortably above the minimum the board
            asked us to hold, and at the current burn rate the runway extends well beyond the next
            two years even if revenue growth slows to half of what we saw this quarter.

            For the next quarter the finance team will focus on shortening the collection cycle for
            large invoices, tightening approval rules for discounts above fifteen percent, and
            preparing the first draft of next year's operating plan together with the department
            heads.

            The key takeaway is that growth is healthy and cash is stable, but we must keep a close
            eye on discounting and the rising cost of payment processing.
            """
        ),
    ),
    Topic(
        key="budget",
        titles=(
            "Budget Plan {year}: {team} Team",
            "{project} Budget Proposal",
            "Headcount and Spend Plan for {year}",
            "{team} Budget Review {quarter}",
        ),
        card_titles=(
            "Submit {team} budget draft by Friday",
            "Reconcile {project} software spend",
            "Get sign-off on {year} travel budget",
        ),
        folders=(
            "/Finance/{year}/Budget",
            "/Projects/{project}/budget",
            "/Projects-old/{project}/budget",
        ),
        tags=("finance", "draft", "review", "meeting", "urgent"),
        categories=("Work",),
        acl_groups=("group:finance",),
        sentences=_bank(
            """
            This document lays out the proposed budget for the {team} team for the coming fiscal
            year, including headcount, tooling, travel, and contractor spend.

            The starting point is last year's actual spending, adjusted for inflation and for the
            {pct} percent growth in customer volume that sales is forecasting.

            Headcount remains the largest line item, accounting for roughly seventy percent of the
            total, and the plan assumes two new engineering positions open in the second half of the
            year.

            Software subscriptions have crept up over the past year, so we audited every license and
            found several tools that overlap or are barely used.

            Cancelling the unused seats and consolidating onto a single design tool should save
            about {amount} annually without any impact on day-to-day work.

            Travel is budgeted conservatively, with one company offsite and a small allowance for
            customer visits that directly support renewals.

            Cloud infrastructure spend is modelled per active customer, which lets us see how costs
            will scale instead of guessing a flat monthly figure.

            We are holding back a contingency reserve of five percent for unplanned work such as
            urgent security fixes or a sudden spike in support volume.

            {person} raised a concern that the contractor budget for {project} is too thin if the
            launch date slips, so we added a checkpoint review at the end of {quarter}.

            Each budget owner will receive a monthly variance report and is expected to explain any
            line that runs more than ten percent over plan.

            Capital expenditure is limited to laptop refreshes and a handful of monitors, since we
            no longer operate any physical servers of our own.

            The finance team needs the final numbers before the planning deadline so that the
            consolidated company budget can be approved by the board.

            If revenue lands below forecast, the first levers we would pull are delaying the second
            hiring wave and reducing discretionary event spending.

            Broken down by category, the draft allocates the largest share to salaries and benefits,
            followed by cloud infrastructure, software licenses, contractors, travel, and training,
            and every category now has a named owner who is accountable for tracking actual spending
            against the plan each month.

            The training budget has been doubled compared with last year, because the engagement
            survey showed that people want more time and money for conferences, courses, and books,
            and because growing skills internally is far cheaper than hiring senior specialists from
            outside.

            We compared three scenarios for the coming year: a conservative case that freezes
            hiring, a base case that follows the current plan, and an ambitious case that
            accelerates the {project} launch, and the proposal recommends the base case with a
            review point halfway through the year.

            To make the numbers easier to follow, the spreadsheet linked from this page shows
            monthly figures for every line item, highlights the assumptions that drive each total,
            and includes a comparison column with last year's actual spending so reviewers can spot
            unusual jumps quickly.

            Overall the proposal asks for a modest increase over last year, justified by the new
            product work on {project} and the expected growth in usage.
            """
        ),
    ),
    Topic(
        key="hiring",
        titles=(
            "Hiring Plan: Senior Engineer for {team}",
            "Onboarding Checklist for New Hires",
            "Interview Loop Guide for the {team} Team",
            "Onboarding Week Plan for {person}",
            "{team} Recruiting Update {quarter} {year}",
        ),
        card_titles=(
            "Schedule final interviews for {team} role",
            "Prepare laptop and accounts for {person}",
            "Write job description for {team} engineer",
        ),
        news_titles=(
            "We are hiring: {num} new roles across {team} and support",
            "Welcome to the newest members of the {team} team",
            "New onboarding programme launches in {quarter}",
        ),
        folders=("/HR/Hiring", "/HR/Onboarding/{year}", "/Projects/{project}/team"),
        tags=("meeting", "draft", "review", "urgent"),
        categories=("Work",),
        sentences=_bank(
            """
            We are opening a senior backend engineer position on the {team} team to help scale the
            services that handle search and document ingestion.

            The job description emphasizes experience with distributed systems, strong written
            communication, and a track record of mentoring more junior colleagues.

            Every candidate goes through a recruiter screen, a practical coding exercise, a system
            design conversation, and a final values interview with two team members.

            Interviewers must submit written feedback within twenty-four hours, before they discuss
            the candidate with anyone else, to avoid anchoring on the first opinion.

            So far we have screened {count} applicants, and three have reached the final round, with
            one strong candidate currently weighing a competing offer.

            New hires receive their laptop and accounts before their first day, so that the first
            morning can be spent meeting people rather than waiting for access.

            During the first week each new colleague is paired with an onboarding buddy who answers
            questions, reviews their first pull request, and introduces them around.

            {person} will run the welcome session, which covers how we plan work, how we communicate
            asynchronously, and where to find the internal documentation.

            By the end of the second week the new engineer should have shipped a small change to
            production and joined the on-call shadow rotation.

            We ask every new hire to write down anything confusing they encounter during onboarding,
            because fresh eyes are the best way to find gaps in our documentation.

            The thirty, sixty, and ninety day check-ins are scheduled up front with the manager so
            that expectations are clear from the very beginning.

            To widen the candidate pool we are posting the role on two community job boards and
            asking employees for referrals, which come with a bonus.

            Salary bands are published in the job advert, which has noticeably reduced late-stage
            drop-offs caused by mismatched compensation expectations.

            The ideal candidate has operated production services at meaningful scale, is comfortable
            debugging problems that cross team boundaries, enjoys writing clear design documents,
            and wants to help shape how a small but growing engineering organization works rather
            than simply closing tickets.

            The coding exercise is a realistic task taken from our own backlog, completed at home in
            about two hours with any tools the candidate likes, and it is followed by a conversation
            in which they walk an interviewer through their choices and the trade-offs they
            considered.

            The onboarding checklist covers accounts for email, chat, the code repository, the
            ticket tracker, and the cloud console, plus a short security training, a reading list of
            architecture documents, and a calendar of introductory meetings with the leads of every
            team the new hire will work with.

            We track a few simple hiring metrics, including time from application to offer, offer
            acceptance rate, and how candidates rate their interview experience, and we review them
            every month to find the stages where good people drop out of the process.

            Onboarding feedback from the last cohort was positive overall, although several people
            said the first day had too many back-to-back meetings.
            """
        ),
    ),
    Topic(
        key="kubernetes",
        titles=(
            "Kubernetes Deployment Guide for {service}",
            "{project} Cluster Upgrade Plan",
            "Helm Chart Conventions for {project}",
            "Rolling Out {service} on Kubernetes",
            "Autoscaling Notes for {service}",
        ),
        card_titles=(
            "Upgrade staging cluster node pools",
            "Add readiness probe to {service}",
            "Move {service} secrets to external secret store",
        ),
        news_titles=(
            "Platform team completes migration of {service} to Kubernetes",
            "New deployment pipeline cuts release time for {project}",
        ),
        folders=(
            "/Projects/{project}/infra",
            "/Projects/{project}/specs",
            "/Engineering/Kubernetes",
            "/Archive/Projects/{project}/infra",
        ),
        tags=("infra", "review", "draft", "urgent"),
        categories=("Work",),
        acl_groups=("group:eng",),
        sentences=_bank(
            """
            The {service} workload runs as a Kubernetes Deployment with three replicas spread across
            availability zones using pod anti-affinity rules.

            Each container declares CPU and memory requests that match observed usage, and the
            limits leave enough headroom for the garbage collector during traffic spikes.

            A readiness probe checks the health endpoint so that pods only receive traffic after
            they have loaded their configuration and warmed the cache.

            We deploy through Helm, with one chart per service and separate values files for the
            development, staging, and production environments.

            Rolling updates use a max surge of one and a max unavailable of zero, which keeps
            serving capacity constant while the new pods come up.

            The horizontal pod autoscaler targets sixty percent CPU utilization and can scale
            {service} from three to {num} replicas during peak hours.

            Secrets are no longer stored in the repository; they are synced from the external secret
            manager and mounted into the pods as files.

            The cluster upgrade for {project} will move the control plane first, then drain and
            replace each node pool one at a time during the maintenance window.

            Before upgrading we run a deprecation scan against all manifests, because the new API
            version removes several beta resources we still reference.

            Ingress traffic terminates TLS at the load balancer, and certificates are renewed
            automatically by cert-manager well before they expire.

            Logs are shipped to the central logging stack by a DaemonSet, and each pod adds labels
            for the service name, version, and environment.

            A pod disruption budget guarantees that at least two replicas stay available while nodes
            are drained for maintenance or autoscaling.

            {person} noticed that the image pull policy was set to always, which slowed down scaling
            events, so we switched to pinned image digests instead.

            The deployment pipeline builds a container image for every merge to the main branch,
            scans it for known vulnerabilities, pushes it to the private registry, and then updates
            the image tag in the Helm values file, which triggers an automatic rollout to the
            staging cluster.

            Resource requests were tuned using two weeks of metrics from the monitoring stack, and
            the new values reduced the number of nodes needed in production by about a fifth while
            keeping latency well within the service level objective during the busiest hours of the
            day.

            Network policies now restrict traffic so that each namespace can only talk to the
            services it actually depends on, which limits the damage a compromised pod could do and
            also documents the real dependency graph between our services in a form that is checked
            automatically.

            For local development, engineers run a lightweight cluster on their laptops with the
            same Helm charts and a reduced values file, so that problems with manifests, probes, or
            configuration show up long before a change reaches the shared staging environment.

            After the rollout we will watch the error rate and latency dashboards for an hour before
            promoting the release to the remaining regions.
            """
        ),
    ),
    Topic(
        key="db_migration",
        titles=(
            "Database Migration Plan: {project}",
            "Schema Migration Runbook for {service}",
            "Moving {project} to PostgreSQL 16",
            "Migration Checklist and Rollback Steps for {service}",
        ),
        card_titles=(
            "Backfill new columns for {service}",
            "Dry run database migration on staging",
            "Write rollback script for {project} schema change",
        ),
        folders=(
            "/Projects/{project}/db",
            "/Projects-old/{project}/migrations",
            "/Engineering/Databases",
        ),
        tags=("infra", "review", "urgent", "draft"),
        categories=("Work",),
        acl_groups=("group:eng",),
        sentences=_bank(
            """
            This plan describes how we will move the {project} database from the old MySQL instance
            to a managed PostgreSQL 16 cluster with minimal downtime.

            The migration has three phases: copying historical data, running both databases in
            parallel with dual writes, and finally switching reads to the new cluster.

            Schema changes are written as versioned migration files that are reviewed like any other
            code and applied automatically during deployment.

            Large tables will be backfilled in batches of ten thousand rows, with a short pause
            between batches so that replication lag stays under a second.

            We added a checksum job that compares row counts and hashes between the old and new
            tables every night until the cutover is complete.

            Adding a column with a default value used to lock the whole table, so we now add the
            column as nullable first and populate it in the background.

            The rollback plan keeps the old database writable for one week after cutover, so we can
            switch back within minutes if we find data problems.

            Index creation on the largest table is done concurrently, which takes longer but avoids
            blocking writes from the {service} service.

            {person} will run a full dry run on staging using a recent production snapshot, timing
            each step so the maintenance window estimate is realistic.

            Foreign key constraints are created as not valid and validated afterwards, which avoids
            a long exclusive lock on the referenced tables.

            Connection pooling moves to PgBouncer in transaction mode, so any code that relies on
            session-level settings has to be updated first.

            During the dry run the backfill of the events table took {hours} hours, which is
            acceptable because it can run while the old system keeps serving traffic.

            After the switch we will monitor the slow query log closely, since the PostgreSQL
            planner may choose different execution plans than MySQL did.

            The dual-write phase is the riskiest part of the plan, because every write must succeed
            in both databases or be retried, so the application wraps both writes in a small outbox
            pattern and a background worker reconciles any rows that failed to reach the new
            cluster.

            Before the cutover we will freeze schema changes for two weeks, announce the maintenance
            window to customers, prepare a status page message, and make sure that every team with a
            service touching the database has someone available on the night of the switch.

            Data types do not map one to one between the two systems, so the conversion scripts
            handle unsigned integers, zero dates, case-insensitive collations, and text columns that
            silently truncated long values in the old database, and each conversion has its own
            test.

            To keep the new cluster healthy after launch, autovacuum settings have been tuned for
            our largest tables, a weekly job checks for bloated indexes, and alerts fire when
            replication lag, connection counts, or disk usage cross the thresholds agreed with the
            on-call team.

            Once the new cluster has been stable for a month, the old instance will be archived to
            cold storage and then decommissioned.
            """
        ),
    ),
    Topic(
        key="postmortem",
        titles=(
            "Incident Postmortem: {service} Outage",
            "Postmortem: Elevated Error Rates on {service}",
            "{service} Incident Review {year}",
            "Blameless Postmortem for the {service} Degradation",
        ),
        card_titles=(
            "Follow up on postmortem action items for {service}",
            "Add alert for connection pool saturation",
            "Update the {service} runbook",
        ),
        news_titles=(
            "Service disruption on {service} resolved",
            "Status update: summary of the {service} incident",
        ),
        folders=(
            "/Engineering/Postmortems/{year}",
            "/Projects/{project}/incidents",
            "/Archive/Projects/{project}/incidents",
        ),
        tags=("infra", "review", "meeting", "urgent", "security"),
        categories=("Work",),
        acl_groups=("group:eng",),
        sentences=_bank(
            """
            On the evening of the incident, the {service} service returned errors for roughly {num}
            minutes, affecting about {pct} percent of requests from customers in Europe.

            The trigger was a configuration change that lowered the database connection pool size,
            which caused requests to queue and eventually time out under normal load.

            Our alerting fired within three minutes, but the on-call engineer was initially misled
            by a dashboard that showed healthy averages and hid the failing tail.

            {person} declared an incident, opened a dedicated channel, and assigned the roles of
            incident commander, communications lead, and investigator.

            Rolling back the configuration restored service immediately, and error rates returned to
            baseline within a few minutes of the rollback completing.

            This postmortem is blameless: the goal is to understand how our systems and processes
            allowed the mistake, not to single out the person who made the change.

            The change had been reviewed, but the reviewer had no way of knowing the production
            traffic profile, because staging runs at a fraction of that load.

            Customers were informed through the status page within fifteen minutes, and the support
            team received {count} tickets related to the outage.

            What went well: the rollback was fast, the incident channel stayed focused, and
            communication with customers was timely and honest.

            What went poorly: the runbook for this service was out of date and pointed to a
            dashboard that had been deleted months earlier.

            As a first action item, configuration changes to connection pools will require a canary
            deployment that holds at ten percent of traffic for thirty minutes.

            We will also add an alert on connection pool saturation, which would have pointed to the
            root cause much earlier than the generic error rate alert.

            A timeline of the incident, reconstructed from chat logs and deploy history, is attached
            to help future responders recognize the same pattern.

            Looking at the timeline, the change was merged in the afternoon, rolled out to all
            regions within twenty minutes, and began causing timeouts as soon as evening traffic
            rose, which explains why the problem was not visible during the quiet period right after
            deployment.

            Several contributing factors combined to make the impact worse, including retries from
            the mobile client that multiplied the load, a missing circuit breaker between the API
            and the database, and an autoscaler that added more pods, each of which opened even more
            connections.

            The investigation took longer than it should have because logs from the affected pods
            were sampled at one percent, the relevant metric was only available on a dashboard few
            people knew about, and the configuration history was spread across two different
            repositories.

            We estimate that roughly {count} customers saw at least one failed request, that no data
            was lost or corrupted, and that the service level objective for the month was still met,
            although the error budget is now nearly exhausted for the remainder of the quarter.

            All action items have owners and due dates, and we will review their status at the next
            weekly reliability meeting.
            """
        ),
    ),
    Topic(
        key="marketing",
        titles=(
            "{campaign} Campaign Brief",
            "{campaign} Campaign Results",
            "Marketing Plan {quarter} {year}",
            "Email Newsletter Strategy for {campaign}",
            "Launch Messaging for {project}",
        ),
        card_titles=(
            "Draft social posts for {campaign}",
            "Review landing page copy for {project} launch",
            "Book sponsor slot for {campaign}",
        ),
        news_titles=(
            "{campaign} campaign launches next week",
            "Record sign-ups from the {campaign} campaign",
        ),
        folders=("/Marketing/Campaigns/{year}", "/Marketing", "/Projects/{project}/launch"),
        tags=("idea", "draft", "review", "meeting"),
        categories=("Work", "Ideas"),
        sentences=_bank(
            """
            The {campaign} campaign aims to increase trial sign-ups by {pct} percent over six weeks,
            focusing on small teams that currently rely on shared drives.

            Our core message is that people should be able to find any document in seconds, whether
            they remember its exact words or only what it was about.

            The campaign runs across email, paid social, a partner webinar, and a refreshed landing
            page with a short product video.

            We will split test two landing page headlines, one emphasizing speed and one emphasizing
            privacy, and keep the winner after two weeks.

            The email sequence has four messages spaced three days apart, each with a single call to
            action and a link to a relevant customer story.

            Paid social spend is capped at {amount}, with daily budgets shifted toward whichever
            audience produces the lowest cost per qualified sign-up.

            {person} is coordinating with the design team on the visuals, which should match the new
            brand colours introduced earlier this year.

            Last year's spring campaign taught us that long forms kill conversion, so the new
            sign-up form asks only for an email address.

            Success will be measured by qualified trials, activation within seven days, and the
            number of trials that convert to paid plans.

            Early results show the webinar attracted {count} registrations, and attendees converted
            at almost twice the rate of the other channels.

            The blog will publish three articles during the campaign, including a practical guide to
            organizing team folders and naming files.

            Customer quotes used in the campaign must be approved in writing, and we will not name
            any customer without their explicit permission.

            We are coordinating the launch date with the product team so that the feature
            highlighted in the campaign is actually available to everyone.

            The target audience is operations leads and team managers at companies with twenty to
            two hundred employees, who are frustrated by scattered files across email, chat, and
            shared drives and who usually make the buying decision themselves without a long
            procurement process.

            Creative assets for the campaign include three short videos, a set of social images in
            two formats, a comparison sheet for sales, and a customer case study showing how a
            logistics company cut the time spent looking for documents by more than half.

            Attribution will use a simple first-touch and last-touch model side by side, because the
            more sophisticated models we tried last year produced numbers nobody trusted, and the
            team would rather make decisions on imperfect but understandable data.

            If the first two weeks show that paid social is underperforming, the plan is to move the
            remaining budget into sponsored newsletters and partner webinars, which historically
            bring in fewer sign-ups but noticeably better qualified trials.

            A short retrospective after the campaign will capture what worked, what did not, and
            which assets we can reuse next quarter.
            """
        ),
    ),
    Topic(
        key="travel",
        titles=(
            "Trip to {city}",
            "{city} Travel Itinerary",
            "Packing List for {city}",
            "Weekend in {city}: Plans and Notes",
            "Conference Trip to {city}",
        ),
        card_titles=("Book flights to {city}", "Arrange hotel for the {city} trip"),
        folders=("/Personal/Travel", "/Personal/Travel/{year}", "/Travel"),
        tags=("travel", "personal", "idea"),
        categories=("Travel",),
        sentences=_bank(
            """
            The trip to {city} is planned for {days} days, with a rough itinerary that leaves every
            afternoon open for wandering and unplanned discoveries.

            Flights are booked on the early morning departure, which is cheaper and gets us in
            before lunch, although it means leaving home at four in the morning.

            We chose a small guesthouse in the old town within walking distance of the main sights,
            the train station, and a good bakery.

            On the first day we will take a free walking tour to get our bearings, then visit the
            covered market for lunch and local specialties.

            The second day is reserved for a day trip along the coast by regional train, with a hike
            between two villages if the weather holds.

            Remember to check whether the museums close on Mondays, because last time we arrived at
            a locked door and had to rearrange the whole day.

            Packing light is the goal: one carry-on each, a rain jacket, comfortable walking shoes,
            a universal adapter, and a reusable water bottle.

            Travel insurance is sorted, copies of passports are saved offline, and the bank has been
            told about the trip so the cards are not blocked.

            {person} recommended a family-run restaurant near the harbour that only takes
            reservations by phone, so we should call as soon as we arrive.

            Public transport passes are cheaper bought as a three-day bundle, and they also include
            the airport bus, which saves a taxi fare.

            The total estimated budget for the trip, including flights, lodging, food, and
            activities, comes to {amount}, which is within what we set aside.

            If there is time on the last evening, we want to catch the sunset from the viewpoint on
            the hill above the old town.

            For the work part of the trip, the conference venue is a twenty-minute tram ride from
            the hotel, and my talk is on the second morning.

            The third day is for the museums and the old cathedral in the morning, a long lunch
            somewhere quiet, and an evening concert if we can still find tickets, with the option of
            simply sitting in a café and watching the city go by if we are tired.

            Getting from the airport to the guesthouse is easiest by the express train, which runs
            every fifteen minutes and takes about half an hour, and the last stretch is a short walk
            uphill on cobblestones, so wheeled suitcases are not the best idea.

            Food is one of the main reasons for the trip, and the list of places to try includes a
            bakery famous for its custard tarts, a small seafood bar with only eight seats, a
            vegetarian lunch spot near the university, and the night market on the weekend.

            We keep a shared document with confirmation numbers, addresses in the local language,
            opening hours, emergency contacts, and a rough daily budget, so that either of us can
            find what we need even without a reliable mobile connection.

            After the trip I want to write down what we would do differently, so the next visit to
            {city} is even more relaxed.
            """
        ),
    ),
    Topic(
        key="recipes",
        titles=(
            "Recipe: {dish_t}",
            "{dish_t} (Weeknight Version)",
            "Grandma's {dish_t}",
            "Notes on Making {dish_t}",
        ),
        folders=("/Personal/Recipes", "/Personal/Recipes/Favourites", "/Recipes"),
        tags=("personal", "idea"),
        categories=("Recipes",),
        sentences=_bank(
            """
            This {dish} recipe serves four people and takes about forty-five minutes from start to
            finish, most of which is hands-off simmering or baking time.

            Start by finely chopping one onion and two cloves of garlic, then soften them slowly in
            olive oil over medium heat without letting them brown.

            Toasting the spices in the dry pan for a minute before adding any liquid releases their
            aroma and makes a noticeable difference to the final flavour.

            Season gradually and taste as you go, because the saltiness of stock varies a lot
            between brands and homemade versions.

            A squeeze of lemon juice right at the end brightens the whole dish and balances the
            richness of the butter and cheese.

            If you are cooking for someone who avoids dairy, olive oil and a spoonful of nutritional
            yeast make a surprisingly good substitute.

            The {dish} keeps well in the fridge for three days and often tastes even better the next
            day once the flavours have had time to settle.

            To turn leftovers into a bake, spread them in an ovenproof dish, cover them with
            breadcrumbs and grated cheese, and let the top turn golden and crisp.

            Bake on the middle shelf at two hundred degrees for about twenty minutes, until the
            edges bubble and the crust is well browned.

            {person} suggested adding a handful of fresh herbs at the end, and parsley or coriander
            both work well depending on what is growing in the garden.

            Use a heavy-bottomed pot if you have one, since thin pans develop hot spots that scorch
            the bottom while the top is still undercooked.

            Serve with crusty bread or steamed rice, and put a bowl of yogurt and chopped chillies
            on the table so everyone can adjust the heat.

            Leftovers freeze well in portions, so it is worth making a double batch on Sunday for
            quick lunches during the week.

            For the ingredients you will need one onion, two cloves of garlic, a thumb of ginger, a
            tin of tomatoes, about a litre of vegetable stock, a generous handful of greens such as
            spinach or kale, and the usual pantry staples of salt, pepper, olive oil, and a few
            dried spices.

            Once the base is ready, add the main ingredients along with the stock and bring
            everything to a gentle simmer, stirring from time to time and adding a splash of water
            whenever the pot looks dry, until everything is tender and the flavours have come
            together.

            The most common mistake is rushing the first step, because onions that are cooked
            quickly over high heat stay sharp and slightly bitter, whereas fifteen patient minutes
            over low heat turn them sweet and give the whole {dish} a much rounder flavour.

            This recipe is forgiving, so feel free to swap in whatever vegetables are in season, use
            a different grain or pulse, or adjust the spices to your taste, but write down what you
            changed so that you can repeat the versions that turn out best.

            Next time I want to try roasting the vegetables first for a deeper, slightly caramelized
            flavour in the {dish}.
            """
        ),
    ),
    Topic(
        key="gardening",
        titles=(
            "Garden Journal: {plant_t}",
            "Spring Planting Plan {year}",
            "Growing {plant_t} in Raised Beds",
            "Vegetable Patch Notes",
            "Allotment Diary {year}",
        ),
        folders=("/Personal/Garden", "/Personal/Garden/{year}"),
        tags=("personal", "idea", "research"),
        categories=("Personal",),
        sentences=_bank(
            """
            This season the raised beds are planted with {plant}, which went in after the last frost
            once the soil had warmed up enough to work.

            Before planting I dug in two barrows of homemade compost, which has noticeably improved
            the drainage of our heavy clay soil.

            Crop rotation matters in a small plot, so the beds that grew potatoes last year now hold
            beans and peas to restore nitrogen.

            Watering deeply twice a week works better than a light sprinkle every day, because it
            encourages the roots to grow down rather than stay near the surface.

            A thick layer of straw mulch keeps the soil moist during hot spells and cuts down
            dramatically on weeding.

            Slugs were a real problem in the wet weeks of spring, so I set beer traps and went out
            with a torch in the evenings to pick them off.

            The {plant} need staking before they get tall, otherwise a single summer storm can
            flatten the whole row overnight.

            Companion planting marigolds and nasturtiums along the edges seems to keep aphids away
            and attracts plenty of hoverflies.

            {person} from the neighbouring allotment gave me seedlings of a heritage variety that
            has been grown in their family for three generations.

            The soil test came back slightly acidic, so I will add garden lime in the autumn rather
            than fertilizing heavily now.

            The harvest started in the middle of summer, and we have picked about {num} kilograms so
            far, far more than the two of us can eat.

            Surplus produce goes to the neighbours and the rest gets preserved as chutney and
            pickles or frozen for the winter months.

            Next year I want to install a rain barrel on the shed roof and try a drip irrigation
            line for the greenhouse.

            The layout this year puts the tall plants on the north side so they do not shade the
            rest of the bed, the herbs along the path where they are easy to pick, and the salad
            crops in the partly shaded corner where they are less likely to bolt during hot weeks.

            Seeds were started indoors on the kitchen windowsill in early spring, pricked out into
            small pots once they had their first true leaves, and hardened off over ten days by
            leaving them outside for a little longer each afternoon before planting them out.

            The compost heap has finally become productive after I started balancing green kitchen
            scraps and grass clippings with brown material such as cardboard and dry leaves, turning
            it every few weeks so that it stays warm and does not smell.

            Keeping a simple garden diary with sowing dates, varieties, weather notes, and harvest
            weights has turned out to be the most useful habit of all, because it shows which plants
            actually did well here rather than which ones I remember fondly.

            The autumn tasks are clearing the spent plants, sowing a green manure cover crop, and
            planting garlic cloves for next summer.
            """
        ),
    ),
    Topic(
        key="astronomy",
        titles=(
            "Observing Log: {target_t}",
            "Night Sky Session Notes",
            "Stargazing Trip Report",
            "Astrophotography Attempt: {target_t}",
            "Observation Notes: {target_t}",
        ),
        news_titles=(
            "Meteor shower expected to peak this weekend",
            "Local astronomy club hosts public viewing of {target}",
            "Dark-sky park opens to amateur astronomers",
        ),
        folders=("/Personal/Astronomy/Observations", "/Photos/Astronomy/{year}"),
        tags=("personal", "research"),
        categories=("Personal", "Ideas"),
        sentences=_bank(
            """
            Last night's observing session started just after astronomical twilight, with clear
            skies, little wind, and a waxing crescent Moon setting early in the west.

            The main target was {target}, which rose high enough above the neighbour's roof by about
            eleven o'clock to be observed through steady air.

            Seeing was good, around four out of five, though transparency dropped after midnight as
            thin high clouds drifted in from the south.

            I used the eight-inch Dobsonian with a twenty-five millimetre eyepiece for framing and
            switched to a ten millimetre eyepiece for detail.

            Through the telescope, the four Galilean moons of Jupiter were lined up on one side, and
            the cloud belts showed clear reddish-brown detail.

            Saturn's rings were tilted enough to show the Cassini division at moments of good
            seeing, along with a faint shadow of the globe on the rings.

            The Andromeda Galaxy appeared as a large elongated glow, with its bright core easy to
            spot and the companion galaxy M32 visible as a small fuzzy star.

            For the astrophotography attempt, I stacked {count} exposures of thirty seconds each,
            which brought out colour and structure the eye cannot see.

            Light pollution from the town to the east washed out the fainter nebulae, so next time
            we plan to drive out to the dark-sky site in the hills.

            A bright meteor streaked through Cassiopeia shortly after one in the morning, leaving a
            faint trail that lasted about a second.

            Several satellites crossed the field during the long exposures, and removing their
            trails afterwards took more time than the imaging itself.

            {person} brought binoculars and spent most of the night sweeping the Milky Way through
            Cygnus, picking out open clusters and dark lanes of dust.

            I sketched the view at the eyepiece, which forces me to look longer and notice detail
            that a quick glance would miss.

            Setting up took about forty minutes, including collimating the mirrors with a laser,
            letting the telescope cool to the outside temperature so that the views would be steady,
            and aligning the finder scope on a bright star before starting on the fainter targets.

            The observing plan for the evening was written in advance with a list of objects ordered
            by when they reach their highest point, which avoids wasting the best part of the night
            on targets that are still low in the murky air near the horizon.

            Later in the session I hunted down several galaxies in the spring sky, most of which
            were only faint smudges at the limit of visibility, but knowing that their light left
            them tens of millions of years ago made each one feel worth the effort.

            Next month the Moon will be out of the way during the first half of the night, so we
            plan to return to the same field, try longer exposures with the tracking mount, and
            compare the results with tonight's images to see how much the extra time helps.

            Dew started forming on the secondary mirror around two o'clock, so a dew heater is now
            at the top of the equipment wish list.
            """
        ),
    ),
    Topic(
        key="physics",
        titles=(
            "Physics Lecture Notes: {lecture_t}",
            "Lecture {lecture_no}: {lecture_t}",
            "Study Notes on {lecture_t}",
            "Problem Set Review: {lecture_t}",
        ),
        news_titles=(
            "Public lecture on {lecture} at the university this Thursday",
            "Physics department opens its lecture series to the public",
        ),
        folders=("/Education/Physics/Lectures", "/Archive/Lectures/Physics"),
        tags=("research", "review"),
        categories=("Personal", "Ideas"),
        sentences=_bank(
            """
            Today's lecture on {lecture} began with a short review of conservation laws, because
            nearly every result in the course can be traced back to them.

            The professor emphasized that energy is conserved in a closed system, but that entropy
            always increases, which gives time its direction.

            We derived the ideal gas law from the kinetic theory of gases, treating molecules as
            point particles that collide elastically with the container walls.

            In special relativity, moving clocks run slow and moving rulers contract, and both
            effects follow from the constancy of the speed of light.

            The famous equation relating energy and mass was presented as a consequence of how
            momentum transforms between inertial frames.

            Maxwell's equations unify electricity and magnetism, and a short calculation shows that
            they predict waves travelling at exactly the speed of light.

            In quantum mechanics a particle is described by a wave function, and the square of its
            amplitude gives the probability of finding the particle in a region.

            The uncertainty principle limits how precisely position and momentum can be known at the
            same time, no matter how good the measuring device is.

            A worked example showed how a particle can tunnel through a barrier that it could never
            cross classically, which explains radioactive alpha decay.

            We spent twenty minutes on dimensional analysis, which is a quick way to check whether
            an answer even has the right units before trusting it.

            The demonstration with a spinning bicycle wheel and a rotating stool made conservation
            of angular momentum memorable for everyone in the room.

            The problem set for this week has {small} questions, and the last one asks us to
            estimate the pressure at the centre of the Sun.

            {person} asked why the second law does not forbid living things from creating order, and
            the answer is that they export even more entropy to their surroundings.

            The lecture then turned to the Carnot cycle, showing that no heat engine operating
            between two temperatures can be more efficient than a reversible one, and that this
            limit depends only on the temperatures of the hot and cold reservoirs rather than on the
            working substance.

            To make the twin paradox less mysterious, the lecturer drew spacetime diagrams for both
            twins and showed that the asymmetry comes from the travelling twin changing inertial
            frames at the turnaround, so the two situations are not actually equivalent.

            In the second half we worked through the hydrogen atom, solving the Schrödinger equation
            in spherical coordinates and seeing how the quantum numbers for energy, angular
            momentum, and its orientation arise naturally from the boundary conditions on the wave
            function.

            The lecturer closed by reminding us that physics is ultimately an experimental science,
            so every elegant derivation on the board has to be tested against measurements, and the
            most exciting moments in the history of the subject came when theory and experiment
            disagreed.

            Next week we move on to statistical mechanics, so it is worth reviewing probability
            distributions and the basics of counting microstates.
            """
        ),
    ),
    Topic(
        key="roadmap",
        titles=(
            "{project} Product Roadmap {year}",
            "Roadmap Priorities for {quarter}",
            "{project}: Now, Next, Later",
            "Feature Roadmap Review {quarter} {year}",
        ),
        card_titles=(
            "Prioritize {quarter} roadmap themes",
            "Write one-pager for saved searches",
            "Collect customer feedback for the {project} roadmap",
        ),
        news_titles=(
            "{project} roadmap: what is coming next",
            "Product update: saved searches arrive in {project}",
        ),
        folders=(
            "/Projects/{project}/roadmap",
            "/Projects-old/{project}/roadmap",
            "/Archive/Projects/{project}",
            "/Product",
        ),
        tags=("idea", "draft", "review", "meeting"),
        categories=("Ideas", "Work"),
        acl_groups=("group:eng",),
        sentences=_bank(
            """
            The {project} roadmap for the next three quarters focuses on three themes: faster
            search, better sharing controls, and a smoother mobile experience.

            Items are grouped into now, next, and later, and only the now column has firm
            commitments; the rest will change as we learn more.

            The top priority for {quarter} is saved searches with notifications, which was the
            single most requested feature in customer interviews.

            We are deliberately not building a full workflow engine this year, because it would take
            the whole team and serve only a small set of customers.

            Improving relevance ranking comes next, starting with hybrid retrieval that combines
            keyword matching with semantic similarity.

            The mobile app will get offline access to recently opened documents, since field teams
            often work with poor connectivity.

            Each roadmap item has a one-page brief describing the problem, the customers affected,
            how we will measure success, and what is explicitly out of scope.

            {person} is the product owner for the sharing controls theme and will run discovery
            interviews with administrators at {small} customer organizations.

            Engineering has flagged that the permissions model needs refactoring before we can ship
            granular sharing, so that work is scheduled first.

            We will review the roadmap at the end of every quarter with sales and support, who bring
            a direct view of what customers struggle with.

            Dates on the public roadmap are shown as quarters rather than specific days, which
            leaves room for quality without breaking promises.

            A few ideas, such as automatic tagging and document summaries, sit in the later column
            until we have validated demand with prototypes.

            Technical debt gets a fixed share of about twenty percent of capacity each sprint, so it
            does not have to compete with features on every decision.

            To decide what goes into each column, the product team scores every candidate item on
            customer impact, strategic fit, confidence in the estimate, and engineering effort, and
            then discusses the top of the list with engineering and design leads rather than simply
            sorting by score.

            Saved searches will let users store a query with its filters, get a notification when
            new documents match, and share the saved search with their team, which covers the most
            common requests we heard from customers who currently repeat the same search every
            morning.

            For hybrid retrieval the plan is to run keyword search and vector search side by side,
            merge the two result lists with reciprocal rank fusion, and measure the change in
            click-through and time to first useful result before making it the default for everyone.

            Items that were on last year's roadmap but did not ship have been reviewed one by one,
            and most were dropped because the underlying customer problem was solved in another way,
            while two were carried forward with a smaller scope and a clearer owner.

            The success metric for the year is weekly active searchers, and every item on the
            roadmap should plausibly move that number.
            """
        ),
    ),
    Topic(
        key="support",
        titles=(
            "Support Ticket #{ticket}: Login Problems",
            "Ticket #{ticket}: Sync Failing for {customer}",
            "Customer Escalation: {customer}",
            "Support Ticket #{ticket}: Missing Search Results",
            "Weekly Support Summary",
        ),
        card_titles=(
            "Reply to {customer} escalation",
            "Triage ticket #{ticket}",
            "Update help article on password resets",
        ),
        folders=("/Support/Tickets/{year}", "/Support"),
        tags=("urgent", "review", "security"),
        categories=("Work",),
        sentences=_bank(
            """
            {customer} reported that several users cannot log in since this morning and are
            redirected back to the sign-in page without any error message.

            The customer is on the business plan, so the ticket was marked as high priority and
            assigned to the second line support queue within the hour.

            The first response went out in twelve minutes, acknowledging the problem and asking for
            browser versions, timestamps, and screenshots.

            Reproduction attempts failed on our side until we enabled single sign-on with the same
            identity provider the customer uses.

            The root cause turned out to be clock drift on one of the customer's servers, which made
            the login tokens appear to be issued in the future.

            Another user at the company reported that search results were missing documents uploaded
            in the past day, which we traced to a delayed indexing job.

            We offered a temporary workaround, which is to re-upload the affected files, while
            engineering investigates the indexing backlog.

            {person} from the support team set up a call with the customer's administrator to walk
            through the sync client logs together.

            The customer was frustrated by the delay but appreciated the regular updates, and we
            committed to posting a status note every two hours.

            The ticket was escalated to engineering with a clear summary, reproduction steps, and
            the relevant log excerpts to avoid back-and-forth.

            Once the fix was deployed, we asked the customer to confirm the issue was resolved
            before closing the ticket.

            This week the support team handled {count} tickets, with login issues and sync conflicts
            making up more than half of the volume.

            Customer satisfaction scores stayed above ninety percent, although two low ratings
            mentioned slow replies over the weekend.

            The customer's administrator confirmed that the problem started shortly after they
            rotated the signing certificate of their identity provider, which pointed us toward a
            stale copy of the old certificate cached by our login service and explained why only
            some users were affected.

            While the fix was being prepared, the support engineer kept a running log in the ticket
            with every step taken, every message sent, and every question still open, which made the
            handover to the next shift smooth and spared the customer from repeating themselves.

            Looking at the week as a whole, the median first response time was under twenty minutes,
            the median time to resolution was just over six hours, and fewer than one in ten tickets
            needed to be escalated beyond the first line of support.

            To reduce the volume of similar tickets, we proposed three product changes to
            engineering: clearer error messages on the sign-in page, a visible indexing status for
            recently uploaded files, and a self-service tool that lets administrators check their
            single sign-on setup.

            We should update the help centre article about password resets, because several tickets
            could have been avoided with clearer instructions.
            """
        ),
    ),
    Topic(
        key="security",
        titles=(
            "Security Audit Report {year}",
            "{project} Security Review",
            "Penetration Test Findings {quarter} {year}",
            "Access Review Checklist {quarter}",
            "Vulnerability Remediation Plan for {project}",
        ),
        card_titles=(
            "Rotate API keys for {service}",
            "Enable MFA for all admin accounts",
            "Fix findings from the {quarter} penetration test",
        ),
        news_titles=(
            "Security audit completed with no critical findings",
            "Mandatory two-factor authentication rolls out next month",
        ),
        folders=(
            "/Security/Audits/{year}",
            "/Projects/{project}/security",
            "/Archive/Projects/{project}/security",
        ),
        tags=("security", "urgent", "review", "infra"),
        categories=("Work",),
        acl_groups=("group:eng",),
        sentences=_bank(
            """
            The annual security audit reviewed access controls, encryption, logging, vendor
            management, and incident response across all production systems.

            An external firm performed a penetration test against the web application and the public
            APIs over two weeks in {quarter}.

            No critical vulnerabilities were found, but the testers reported {small} medium
            findings, most related to missing security headers and verbose error messages.

            One high finding allowed a user to enumerate document identifiers belonging to other
            tenants, and it was fixed and verified within forty-eight hours.

            Every employee account must now use multi-factor authentication, and hardware security
            keys are required for administrators.

            The quarterly access review removed {count} stale accounts belonging to former
            contractors who still had read access to the shared drive.

            Data is encrypted at rest with keys managed by the cloud provider, and all traffic
            between internal services uses mutual TLS.

            Dependency scanning now runs on every pull request, and builds fail when a library with
            a known critical vulnerability is introduced.

            The auditors recommended shortening the retention of application logs that may contain
            personal data, in line with our privacy policy.

            {person} will own the remediation plan, tracking each finding with a severity, an owner,
            and a target date in the security backlog.

            Secrets that were found in old commits have been rotated, and a pre-commit hook now
            blocks new credentials from being pushed.

            The incident response plan was tested with a tabletop exercise simulating a compromised
            laptop, which exposed gaps in our asset inventory.

            Vendors that process customer data must provide a current security report, and two
            vendors are being replaced for failing to do so.

            The scope of the audit included the production cloud accounts, the source code
            repositories, the continuous integration system, employee laptops, and the third-party
            services that store or process customer data, while the marketing website was excluded
            because it holds no customer information.

            For each finding the report gives a short description, the affected systems, the steps
            to reproduce it, an assessment of likelihood and impact, and a recommended fix, which
            makes it straightforward to turn the report into tickets for the teams that own each
            system.

            Laptops are now enrolled in device management, which enforces disk encryption, screen
            locks, automatic updates, and a firewall, and lets the security team wipe a lost or
            stolen device remotely within minutes of it being reported.

            The next audit cycle will add a review of how we handle customer deletion requests, a
            test of restoring production data from backups, and a check that logging covers every
            administrative action taken through the internal support tools.

            The final report will be shared with customers under a non-disclosure agreement as part
            of our ongoing compliance commitments.
            """
        ),
    ),
    Topic(
        key="offsite",
        titles=(
            "Team Offsite {year}: Agenda",
            "Offsite Planning in {city}",
            "Offsite Retrospective {year}",
            "{team} Team Offsite Notes",
        ),
        card_titles=(
            "Book venue for the {team} offsite",
            "Collect dietary requirements for the offsite",
            "Plan the offsite agenda",
        ),
        news_titles=("Company offsite heads to {city} this spring",),
        folders=("/Events/Offsites/{year}", "/Photos/Team Offsite {year}", "/HR/Events"),
        tags=("meeting", "travel", "draft"),
        categories=("Work", "Travel"),
        sentences=_bank(
            """
            The {team} team offsite will take place over two days in {city}, bringing together
            everyone who normally works remotely across four time zones.

            The goals are to agree on priorities for the next two quarters, repair a few strained
            working relationships, and simply spend time together in person.

            The venue is a converted farmhouse with one large meeting room, two smaller breakout
            spaces, and a kitchen that can cater for dietary requirements.

            Day one starts with a review of the past year, followed by small group sessions on the
            biggest problems each person sees in how we work.

            In the afternoon {person} will facilitate a session on team agreements, covering meeting
            norms, response times, and how we hand over work.

            Day two focuses on planning, using the themes from the first day to draft goals that we
            will refine with leadership the following week.

            Evenings are deliberately unstructured, although there is an optional group dinner and a
            guided walk through the old town on the first night.

            Please send dietary requirements, accessibility needs, and travel dates to the
            organizers at least three weeks before the event.

            The travel budget covers economy train or flights plus two nights of accommodation, and
            receipts should be submitted within thirty days.

            We kept the agenda light on presentations, because the feedback from last year was that
            there was too much listening and not enough discussion.

            A shared document collects questions in advance, and the most upvoted ones will be
            answered in an open session with the leadership team.

            The survey after the offsite showed satisfaction {pct} points higher than last year,
            with the team agreements session rated highest.

            Several people asked for more unstructured time next year, and some suggested a
            volunteering activity instead of a team building game.

            Getting there is part of the experience, so most people will take the train from the
            city and a shared minibus for the last stretch, and those flying in from further away
            should aim to arrive the evening before so that nobody misses the opening session.

            The most valuable session last time was the one where each person described the part of
            their job that frustrates them most, and several long-standing problems were solved on
            the spot simply because the right people were finally in the same room.

            We booked a local guide for a half-day hike on the second morning, with a shorter
            walking route and a visit to the town museum as an alternative for anyone who prefers
            something gentler, so that everyone can take part in an activity they enjoy.

            To make the offsite inclusive for people with caring responsibilities, all sessions end
            by six in the evening, the dinner is optional, and remote attendance is possible for the
            planning sessions through a video link set up in the main room.

            Outcomes and decisions from the offsite are summarized in the planning document, with an
            owner assigned to each follow-up.
            """
        ),
    ),
    Topic(
        key="books",
        titles=(
            "Book Notes: {book}",
            "Reading Notes on {book}",
            "Highlights from {book}",
            "{book}: Summary and Takeaways",
        ),
        folders=("/Personal/Books", "/Personal/Reading/{year}"),
        tags=("personal", "research", "idea"),
        categories=("Personal", "Ideas"),
        sentences=_bank(
            """
            These are my notes on {book} by {author}, which I finished reading over the holidays
            after it had been sitting on my shelf for a year.

            The central argument is easy to summarize in a sentence but takes the whole book to make
            convincing, mostly through well-chosen examples and stories.

            The first third of the book is the strongest, and I underlined more passages there than
            in the rest of the book combined.

            The author has a gift for memorable examples, and several of them have already come up
            in conversations at work.

            One idea that stuck with me is that our environment shapes our behaviour more than our
            intentions, so it is easier to change the setup than to rely on willpower.

            I found the middle chapters repetitive, and the book could probably have been a third
            shorter without losing anything important.

            Some of the research cited has not held up well in replication studies, so I would treat
            the more dramatic claims with caution.

            My favourite chapter discusses how experts build mental models through deliberate
            practice and fast, honest feedback.

            A practical takeaway is to write a short summary after every chapter, which forces me to
            notice whether I actually understood the argument.

            {person} recommended this book to me, and we plan to discuss it at the next meeting of
            our small reading group.

            Compared with similar books I have read, this one is more grounded in real examples and
            less in motivational slogans.

            I rated it four out of five stars, mostly for the clarity of the writing and the number
            of ideas I can actually use.

            Next on my reading list is a history of science book, to balance all the productivity
            and psychology titles from this year.

            The book opens with a set of puzzles that most readers get wrong, and the author uses
            those mistakes to introduce the main framework, which is then applied in turn to work,
            relationships, money, and decision making in large organizations.

            What I appreciated most is that the author admits where the evidence is thin, separates
            well-established findings from personal speculation, and gives readers enough detail
            about the studies to judge the strength of each claim for themselves.

            Reading it alongside my own notes from the past year, I noticed how many of the mistakes
            it describes I have made myself, especially overconfidence in early estimates and the
            habit of judging a decision by its outcome rather than by the information available at
            the time.

            If I had to recommend just one chapter to a busy colleague, it would be the one on
            designing systems and routines that make good behaviour the default, because it is
            short, practical, and applies equally to software teams and to personal habits.

            I keep my highlights in a plain text file, tagged by theme, so that I can search across
            every book I have read when writing.
            """
        ),
    ),
    Topic(
        key="fitness",
        titles=(
            "Training Plan: {goal_t}",
            "{weeks}-Week Plan for a {goal_t}",
            "Fitness Log {year}",
            "Strength and Running Routine",
        ),
        folders=("/Personal/Fitness", "/Personal/Health/Training"),
        tags=("personal",),
        categories=("Personal",),
        sentences=_bank(
            """
            The goal for the next {weeks} weeks is to prepare for a {goal} while staying injury free
            and keeping the training enjoyable.

            Each week includes three runs: an easy run at conversational pace, an interval session,
            and a long slow run on the weekend.

            Strength training twice a week focuses on squats, deadlifts, lunges, and core work,
            which should help prevent the knee pain I had last year.

            The long run increases by no more than ten percent per week, with a lighter recovery
            week every fourth week to let the body adapt.

            Intervals this week were six repeats of eight hundred metres at target race pace, with
            two minutes of easy jogging in between.

            Sleep turns out to be the most important recovery tool, so I am aiming for at least
            seven and a half hours, even in busy weeks.

            On rest days I do twenty minutes of mobility work and stretching, focusing on hips,
            hamstrings, and calves.

            Nutrition is simple: more vegetables and protein, fewer late-night snacks, and a proper
            breakfast before long runs.

            {person} joined the Saturday long run this week, and having company made the last few
            kilometres feel much easier.

            My resting heart rate has dropped by {small} beats per minute since the start of the
            plan, which is a good sign that aerobic fitness is improving.

            A sports watch tracks pace and heart rate, but I try not to obsess over the numbers on
            easy days and simply run by feel.

            If anything hurts for more than two days, the rule is to stop, rest, and see a
            physiotherapist instead of pushing through.

            The taper in the final two weeks cuts mileage in half while keeping a little intensity,
            so my legs feel fresh on race day.

            A typical week looks like this: an easy run on Monday, strength training on Tuesday,
            intervals on Wednesday, rest or mobility on Thursday, strength and a short easy run on
            Friday, the long run on Saturday, and a complete rest day on Sunday with only a relaxed
            walk.

            Pacing is based on a recent time trial rather than on wishful thinking, so easy runs are
            deliberately slow enough to hold a conversation, and the interval pace is only slightly
            faster than the target race pace for the {goal}.

            The biggest lesson from the last training block was that consistency beats heroics,
            because the weeks in which I skipped sessions and then tried to make up for them with
            one very long run were exactly the weeks that ended with sore knees and poor sleep.

            On race day the plan is to start conservatively, take water at every station, eat an
            energy gel every forty minutes, and only pick up the pace in the final third if my
            breathing still feels controlled and my legs feel strong.

            After the {goal} I want to keep a base of three sessions a week rather than stopping
            completely like last time.
            """
        ),
    ),
)
TOPIC_BY_KEY: dict[str, Topic] = {topic.key: topic for topic in TOPICS}


@dataclass(frozen=True)
class RareTerm:
    """A distinctive term placed in exactly one document, for exact-term search tests."""

    term: str
    doc_type: str
    topic: str
    sentence: str


RARE_TERMS: tuple[RareTerm, ...] = (
    RareTerm(
        term="zygomorphic",
        doc_type="note",
        topic="gardening",
        sentence=(
            "The foxgloves at the back of the border have zygomorphic flowers, so only heavy "
            "bumblebees can push past the lower lip to reach the nectar."
        ),
    ),
    RareTerm(
        term="photoperiodism",
        doc_type="file",
        topic="gardening",
        sentence=(
            "The chrysanthemums are a neat lesson in photoperiodism, since they only begin to form "
            "buds once the nights grow longer than the days."
        ),
    ),
    RareTerm(
        term="Kessler syndrome",
        doc_type="news_item",
        topic="astronomy",
        sentence=(
            "Researchers warn that the growing number of satellites in low orbit raises the "
            "risk of Kessler syndrome, a cascade of collisions that could leave some orbits "
            "unusable for decades."
        ),
    ),
    RareTerm(
        term="Bremsstrahlung",
        doc_type="file",
        topic="physics",
        sentence=(
            "We also covered Bremsstrahlung, the braking radiation emitted when a fast electron is "
            "deflected by an atomic nucleus, which is how an X-ray tube produces its continuous "
            "spectrum."
        ),
    ),
    RareTerm(
        term="typosquatting",
        doc_type="deck_card",
        topic="security",
        sentence=(
            "A dependency whose name is one letter away from a popular package turned out to be a "
            "typosquatting attempt, so it was removed from the build and reported."
        ),
    ),
    RareTerm(
        term="Maillard",
        doc_type="note",
        topic="recipes",
        sentence=(
            "Searing the mushrooms hard until they are deep brown drives the Maillard reaction, "
            "which gives the {dish} most of its savoury depth."
        ),
    ),
)


@dataclass
class Draft:
    """A document under construction; rendered to the API shape by `Draft.render`."""

    doc_type: str
    doc_id: str
    topic: Topic
    context: dict[str, str]
    title: str
    sentences: list[str]
    owner: str
    modified_at: str
    file_path: str | None
    tags: list[str]
    category: str | None
    mime_type: str
    acl: list[str]
    rare_terms: list[str] = field(default_factory=list)

    def content(self) -> str:
        """Join the sentences, splitting longer documents into paragraphs of about four."""
        count = len(self.sentences)
        if count < 7:
            return " ".join(self.sentences)
        paragraphs = -(-count // 4)
        size = -(-count // paragraphs)
        return "\n\n".join(
            " ".join(self.sentences[start : start + size]) for start in range(0, count, size)
        )

    def render(self) -> Doc:
        return {
            "doc_type": self.doc_type,
            "doc_id": self.doc_id,
            "title": self.title,
            "content": self.content(),
            "owner": self.owner,
            "modified_at": self.modified_at,
            "file_path": self.file_path,
            "tags": list(self.tags),
            "category": self.category,
            "mime_type": self.mime_type,
            "acl": list(self.acl),
        }


def title_case(text: str) -> str:
    """Capitalize the first letter of every word, leaving the rest untouched."""
    return " ".join(word[:1].upper() + word[1:] for word in text.split(" "))


def slugify(text: str, max_len: int = 60) -> str:
    """Lower-case ASCII file-name stem from a title."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:max_len].rstrip("-") or "untitled"


def word_count(sentences: list[str]) -> int:
    return sum(len(sentence.split()) for sentence in sentences)


def count_long(drafts: list[Draft]) -> int:
    return sum(1 for draft in drafts if word_count(draft.sentences) >= LONG_MIN_WORDS)


def weighted_choice(rng: random.Random, options: tuple[tuple[str, int], ...]) -> str:
    values = [value for value, _ in options]
    weights = [weight for _, weight in options]
    return rng.choices(values, weights=weights, k=1)[0]


def make_context(rng: random.Random, year: int) -> dict[str, str]:
    """Draw one value for every slot used by titles, sentences and folders."""
    book, author = rng.choice(BOOKS)
    context = {
        "project": rng.choice(PROJECTS),
        "quarter": rng.choice(QUARTERS),
        "year": str(year),
        "person": rng.choice(PEOPLE),
        "team": rng.choice(TEAMS),
        "service": rng.choice(SERVICES),
        "customer": rng.choice(CUSTOMERS),
        "campaign": rng.choice(CAMPAIGNS),
        "city": rng.choice(CITIES),
        "dish": rng.choice(DISHES),
        "plant": rng.choice(PLANTS),
        "target": rng.choice(TARGETS),
        "lecture": rng.choice(LECTURES),
        "goal": rng.choice(GOALS),
        "book": book,
        "author": author,
        "pct": str(rng.randint(3, 18)),
        "num": str(rng.randint(12, 45)),
        "count": str(rng.randint(20, 240)),
        "small": str(rng.randint(3, 9)),
        "days": str(rng.randint(3, 10)),
        "hours": str(rng.randint(2, 9)),
        "weeks": str(rng.choice((8, 10, 12, 16))),
        "lecture_no": str(rng.randint(1, 24)),
        "ticket": str(rng.randint(10000, 99999)),
        "amount": f"${rng.randint(12, 480) * 100:,}",
        "big_amount": f"${rng.randint(12, 95) / 10:.1f} million",
    }
    for key in ("dish", "plant", "target", "lecture", "goal"):
        context[f"{key}_t"] = title_case(context[key])
    return context


def pick_sentences(rng: random.Random, bank: list[str], doc_type: str, long: bool) -> list[str]:
    """Choose sentences from a topic bank, keeping the bank's order so the text flows."""
    if long:
        # Lean on the bank's longest, most detailed sentences so the text spans several chunks.
        detailed = [index for index, sentence in enumerate(bank) if len(sentence.split()) >= 35]
        others = [index for index in range(len(bank)) if index not in detailed]
        for _ in range(200):
            count = rng.randint(10, MAX_SENTENCES)
            picked = rng.sample(detailed, rng.randint(min(3, len(detailed)), len(detailed)))
            picked += rng.sample(others, min(count - len(picked), len(others)))
            chosen = [bank[index] for index in sorted(picked)]
            if LONG_MIN_WORDS <= word_count(chosen) <= LONG_MAX_WORDS:
                return chosen
        longest = sorted(range(len(bank)), key=lambda index: -len(bank[index].split()))
        chosen = [bank[index] for index in sorted(longest[:MAX_SENTENCES])]
        if word_count(chosen) < LONG_MIN_WORDS:
            raise ValueError("sentence bank too short for a long document")
        return chosen
    low, high = SENTENCE_RANGE[doc_type]
    indices = sorted(rng.sample(range(len(bank)), rng.randint(low, high)))
    return [bank[index] for index in indices]


def pick_tags(rng: random.Random, topic: Topic, archived: bool) -> list[str]:
    count = rng.choices((0, 1, 2, 3), weights=(15, 35, 30, 20), k=1)[0]
    tags: list[str] = []
    if archived and rng.random() < 0.7:
        tags.append("archive")
    pool = [tag for tag in topic.tags if tag not in tags]
    tags.extend(rng.sample(pool, min(max(count - len(tags), 0), len(pool))))
    return tags


def pick_acl(rng: random.Random, topic: Topic, owner: str) -> list[str]:
    acl = ["group:demo"]
    for group in topic.acl_groups:
        if rng.random() < 0.5:
            acl.append(group)
    if rng.random() < 0.35:
        acl.append(f"user:{rng.choice([name for name in OWNERS if name != owner])}")
    return acl


def make_file_path(rng: random.Random, topic: Topic, context: dict[str, str], title: str) -> str:
    folder = rng.choice(topic.folders).format_map(context)
    extension = weighted_choice(rng, tuple((ext, weight) for ext, _, weight in FILE_EXTENSIONS))
    return f"{folder}/{slugify(title)}{extension}"


def topic_order(rng: random.Random, doc_type: str, count: int) -> list[Topic]:
    """Round-robin over the topics that suit a doc_type, shuffled afresh each round."""
    eligible = [topic for topic in TOPICS if topic.title_templates(doc_type)]
    order: list[Topic] = []
    while len(order) < count:
        round_topics = list(eligible)
        rng.shuffle(round_topics)
        order.extend(round_topics)
    return order[:count]


def make_draft(rng: random.Random, doc_type: str, number: int, topic: Topic) -> Draft:
    span = int((END - START).total_seconds())
    modified = START + timedelta(seconds=rng.randint(0, span))
    context = make_context(rng, modified.year)
    title = rng.choice(topic.title_templates(doc_type)).format_map(context)
    bank = [sentence.format_map(context) for sentence in topic.sentences]
    long = rng.random() < LONG_PROBABILITY[doc_type]
    sentences = pick_sentences(rng, bank, doc_type, long)
    owner = rng.choice(OWNERS)
    file_path: str | None = None
    category: str | None = None
    if doc_type == "file":
        file_path = make_file_path(rng, topic, context, title)
        mime_type = next(mime for ext, mime, _ in FILE_EXTENSIONS if file_path.endswith(ext))
    else:
        mime_type = weighted_choice(rng, OTHER_MIME[doc_type])
    if doc_type == "note":
        category = rng.choice(topic.categories)
    archived = file_path is not None and file_path.startswith(("/Archive/", "/Projects-old/"))
    return Draft(
        doc_type=doc_type,
        doc_id=f"{ID_PREFIX[doc_type]}{number:04d}",
        topic=topic,
        context=context,
        title=title,
        sentences=sentences,
        owner=owner,
        modified_at=modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
        file_path=file_path,
        tags=pick_tags(rng, topic, archived),
        category=category,
        mime_type=mime_type,
        acl=pick_acl(rng, topic, owner),
    )


def assign_shared_ids(rng: random.Random, drafts: list[Draft]) -> None:
    """Give the same doc_id string to one document of each of two doc_types."""
    taken: set[int] = set()
    for shared_id, *doc_types in SHARED_IDS:
        for doc_type in doc_types:
            candidates = [
                index
                for index, draft in enumerate(drafts)
                if draft.doc_type == doc_type and index not in taken
            ]
            index = rng.choice(candidates)
            taken.add(index)
            drafts[index].doc_id = shared_id


def inject_rare_terms(rng: random.Random, drafts: list[Draft]) -> None:
    """Replace one sentence (never the first) of a fitting document with a rare-term sentence."""
    for rare in RARE_TERMS:
        candidates = [
            draft
            for draft in drafts
            if draft.doc_type == rare.doc_type
            and draft.topic.key == rare.topic
            and not draft.rare_terms
        ]
        draft = rng.choice(candidates)
        position = rng.randrange(1, len(draft.sentences))
        draft.sentences[position] = rare.sentence.format_map(draft.context)
        draft.rare_terms.append(rare.term)


def dedupe_file_paths(drafts: list[Draft]) -> None:
    seen: set[str] = set()
    for draft in drafts:
        if draft.file_path is None:
            continue
        path = draft.file_path
        stem, dot, extension = path.rpartition(".")
        suffix = 2
        while path in seen:
            path = f"{stem}-{suffix}{dot}{extension}"
            suffix += 1
        seen.add(path)
        draft.file_path = path


def build_drafts(seed: int = SEED) -> list[Draft]:
    rng = random.Random(seed)
    drafts: list[Draft] = []
    for doc_type, count in DOC_TYPE_COUNTS:
        for number, topic in enumerate(topic_order(rng, doc_type, count), start=1):
            drafts.append(make_draft(rng, doc_type, number, topic))
    assign_shared_ids(rng, drafts)
    inject_rare_terms(rng, drafts)
    dedupe_file_paths(drafts)
    return drafts


def _fail(message: str) -> None:
    raise SystemExit(f"corpus check failed: {message}")


def validate(drafts: list[Draft]) -> None:
    """Check the invariants the demo and the tests rely on."""
    docs = [draft.render() for draft in drafts]
    keys = [(draft.doc_type, draft.doc_id) for draft in drafts]
    if len(set(keys)) != len(keys):
        _fail("duplicate (doc_type, doc_id)")
    types_by_id: dict[str, set[str]] = {}
    for doc_type, doc_id in keys:
        types_by_id.setdefault(doc_id, set()).add(doc_type)
        if not 1 <= len(doc_id) <= 256:
            _fail(f"doc_id length out of range: {doc_id!r}")
    if sum(1 for types in types_by_id.values() if len(types) > 1) != len(SHARED_IDS):
        _fail("unexpected number of doc_ids shared across doc_types")
    for draft, doc in zip(drafts, docs, strict=True):
        if not 2 <= len(draft.sentences) <= MAX_SENTENCES:
            _fail(f"{draft.doc_id}: {len(draft.sentences)} sentences")
        if (doc["file_path"] is None) == (draft.doc_type == "file"):
            _fail(f"{draft.doc_id}: file_path must be set exactly for files")
        if (doc["category"] is None) == (draft.doc_type == "note"):
            _fail(f"{draft.doc_id}: category must be set exactly for notes")
        if draft.category is not None and draft.category not in NOTE_CATEGORIES:
            _fail(f"{draft.doc_id}: bad category {draft.category}")
        if draft.file_path is not None:
            depth = len(draft.file_path.split("/")) - 2
            if not draft.file_path.startswith("/") or not 1 <= depth <= 4:
                _fail(f"{draft.doc_id}: bad file_path {draft.file_path}")
        if len(draft.tags) > 3 or any(tag not in TAG_VOCABULARY for tag in draft.tags):
            _fail(f"{draft.doc_id}: bad tags {draft.tags}")
        if "group:demo" not in draft.acl or draft.owner not in OWNERS:
            _fail(f"{draft.doc_id}: bad acl or owner")
        if not START <= datetime.strptime(draft.modified_at, "%Y-%m-%dT%H:%M:%S%z") <= END:
            _fail(f"{draft.doc_id}: modified_at out of range")
        if "{" in f"{doc['title']}{doc['content']}":
            _fail(f"{draft.doc_id}: unfilled slot")
    texts = [f"{draft.title}\n{draft.render()['content']}\n{draft.file_path}" for draft in drafts]
    for rare in RARE_TERMS:
        hits = sum(1 for text in texts if rare.term.lower() in text.lower())
        if hits != 1:
            _fail(f"rare term {rare.term!r} occurs in {hits} documents")
    paths = [draft.file_path for draft in drafts if draft.file_path is not None]
    for prefix in ("/Projects/", "/Projects-old/", "/Archive/Projects/"):
        if not any(path.startswith(prefix) for path in paths):
            _fail(f"no file under {prefix}")
    long_docs = count_long(drafts)
    if long_docs < 10:
        _fail(f"only {long_docs} long documents")


def serialize(drafts: list[Draft]) -> str:
    return "".join(
        json.dumps(draft.render(), sort_keys=True, ensure_ascii=False) + "\n" for draft in drafts
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSONL file to write")
    args = parser.parse_args()
    output: Path = args.output
    drafts = build_drafts()
    validate(drafts)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(serialize(drafts), encoding="utf-8", newline="\n")
    counts = Counter(draft.doc_type for draft in drafts)
    long_docs = count_long(drafts)
    print(f"wrote {len(drafts)} documents to {output}")
    print("by doc_type: " + ", ".join(f"{name}={counts[name]}" for name, _ in DOC_TYPE_COUNTS))
    print(f"long documents (>= {LONG_MIN_WORDS} words): {long_docs}")
    for draft in drafts:
        for term in draft.rare_terms:
            print(f"rare term {term!r}: {draft.doc_type} {draft.doc_id} ({draft.title})")


if __name__ == "__main__":
    main()
