"""Where a plan item says to edit: `Location`, a record of hotspot/att/plan_items.py (the plan's items
live below att/), re-exported here for the rule context and the views."""

from __future__ import annotations

from hotspot.att.plan_items import Location as Location
