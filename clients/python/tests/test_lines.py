# SPDX-License-Identifier: Apache-2.0
"""The parts without a daemon: parsing lines, sorting replies and events, the backoff schedule."""

import json
import unittest

import tiltd
import tiltd.show
from tiltd._core import Session, backoff_delays


def wire(*objs) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


class ParseTests(unittest.TestCase):
    def test_known_class_fields_and_unknown_fields_kept(self):
        line = tiltd.parse_line('{"class":"game","seq":7,"t_ns":5,"kind":"correct","prompt":"sushi",'
                                '"tilt_deg":37.1,"decision_ms":2399,"new_field":[1,2]}')
        self.assertIsInstance(line, tiltd.Game)
        self.assertEqual((line.seq, line.t_ns, line.kind, line.prompt, line.decision_ms), (7, 5, "correct", "sushi", 2399))
        self.assertTrue(line.is_decision)
        self.assertEqual(line.extra, {"new_field": [1, 2]})
        self.assertEqual(line.get("new_field"), [1, 2])

    def test_attitude_heading_fields(self):
        line = tiltd.parse_line('{"class":"attitude","seq":41,"t_ns":9,"q":[1,0,0,0],"roll_deg":90.1,'
                                '"pitch_deg":-0.4,"yaw_deg":-61.2,"at_rest":false,"heading_deg":61.3,'
                                '"true_heading_deg":66.1,"heading_source":"mag","mag_disturbed":true}')
        self.assertIsInstance(line, tiltd.Attitude)
        self.assertEqual((line.heading_deg, line.true_heading_deg, line.heading_source, line.mag_disturbed),
                         (61.3, 66.1, "mag", True))
        self.assertEqual(line.extra, {})
        self.assertIn("heading 61.3° magnetic 66.1° true (mag, field disturbed)", tiltd.show.describe(line))
        old = tiltd.parse_line('{"class":"attitude","roll_deg":1,"pitch_deg":2,"at_rest":true}')
        self.assertEqual((old.heading_deg, old.true_heading_deg, old.heading_source, old.mag_disturbed),
                         (None, None, None, None))
        self.assertNotIn("heading", tiltd.show.describe(old))
        none = tiltd.parse_line('{"class":"attitude","roll_deg":1,"pitch_deg":2,"heading_source":"none"}')
        self.assertIn("heading - (none)", tiltd.show.describe(none))

    def test_unknown_class_passes_through(self):
        line = tiltd.parse_line(b'{"class":"weather","seq":3,"rain_mm":2}')
        self.assertEqual(type(line), tiltd.Line)
        self.assertEqual((line.line_class, line.seq, line.extra), ("weather", 3, {"rain_mm": 2}))
        self.assertEqual(json.loads(line.to_json()), {"class": "weather", "seq": 3, "rain_mm": 2})

    def test_reply_result_fields(self):
        r = tiltd.parse_line({"class": "reply", "id": 4, "cmd": "credits", "ok": True, "balance": 3, "places": []})
        self.assertIsInstance(r, tiltd.Reply)
        self.assertEqual((r.id, r["balance"], "places" in r, r.error_code), (4, 3, True, None))

    def test_not_a_line(self):
        for bad in ("[1]", '{"seq":1}', "{nope"):
            with self.assertRaises(ValueError):
                tiltd.parse_line(bad)


class SessionTests(unittest.TestCase):
    def test_replies_matched_by_id_in_any_order(self):
        s = Session()
        a, _ = s.request("credits", {})
        b, _ = s.request("snooze", {"distance_m": 50})
        # The daemon may answer the later command first (docs/protocol.md, "Commands").
        s.feed(wire({"class": "reply", "id": b, "cmd": "snooze", "ok": True, "until_moved_m": 50},
                    {"class": "game", "kind": "prompt"}))
        self.assertIsNone(s.take_reply(a))
        self.assertEqual(s.take_reply(b)["until_moved_m"], 50)
        s.feed(wire({"class": "reply", "id": a, "cmd": "credits", "ok": True, "balance": 0})[:10])
        self.assertIsNone(s.take_reply(a))  # half a line is not a line
        s.feed(wire({"class": "reply", "id": a, "cmd": "credits", "ok": True, "balance": 0})[10:])
        self.assertEqual(s.take_reply(a)["balance"], 0)
        self.assertEqual(s.pop_event().kind, "prompt")
        self.assertIsNone(s.pop_event())

    def test_refusal_raises_with_code_and_message(self):
        s = Session()
        rid, data = s.request("fly", {"speed": None})
        self.assertEqual(json.loads(data), {"cmd": "fly", "id": rid})  # None arguments are not sent
        s.feed(wire({"class": "reply", "id": rid, "cmd": None, "ok": False,
                     "error": {"code": "unknown_command", "message": "unknown command \"fly\""}}))
        with self.assertRaises(tiltd.CommandError) as e:
            s.take_reply(rid)
        self.assertEqual((e.exception.code, e.exception.cmd), ("unknown_command", "fly"))

    def test_a_watch_reply_drops_queued_lines_of_classes_no_longer_watched(self):
        s = Session()
        rid, _ = s.request("watch", {"classes": ["game"], "attitude_hz": 0})
        s.feed(wire({"class": "hello"}, {"class": "attitude"}, {"class": "game", "kind": "prompt"},
                    {"class": "reply", "id": rid, "cmd": "watch", "ok": True,
                     "watch": {"classes": ["game"], "attitude_hz": 0, "samples": False}}))
        self.assertEqual(s.take_reply(rid)["watch"]["classes"], ["game"])
        self.assertEqual([s.pop_event().line_class for _ in range(2)], ["hello", "game"])
        self.assertIsNone(s.pop_event())
        self.assertEqual(s.watch_settings["attitude_hz"], 0)

    def test_bounded_queue_reports_a_local_gap(self):
        s = Session(queue_lines=16)
        s.feed(wire(*({"class": "attitude", "seq": i} for i in range(20))))
        gap = s.pop_event()
        self.assertIsInstance(gap, tiltd.Gap)
        self.assertEqual((gap.dropped, gap.local), (4, True))
        self.assertEqual(s.pop_event().seq, 4)

    def test_lost_connection_returns_the_ids_in_flight(self):
        s = Session()
        a, _ = s.request("ping", {})
        self.assertEqual(s.new_connection(), [a])
        s.feed(wire({"class": "reply", "id": a, "cmd": "ping", "ok": True}))
        self.assertIsNone(s.take_reply(a))

    def test_backoff_is_bounded(self):
        delays = list(backoff_delays(10))
        self.assertAlmostEqual(sum(delays), 10)
        self.assertEqual(delays[:3], [0.1, 0.2, 0.4])
        self.assertLessEqual(max(delays), 5)

    def test_socket_path_default_and_environment(self):
        import os
        old = os.environ.pop("TILTD_SOCKET", None)
        try:
            self.assertEqual(tiltd.socket_path(), "/run/tiltd/tiltd.sock")
            os.environ["TILTD_SOCKET"] = "/tmp/x.sock"
            self.assertEqual(tiltd.socket_path(), "/tmp/x.sock")
            self.assertEqual(tiltd.socket_path("/a.sock"), "/a.sock")
        finally:
            os.environ.pop("TILTD_SOCKET", None)
            if old is not None:
                os.environ["TILTD_SOCKET"] = old
