// SPDX-License-Identifier: Apache-2.0
import TiltConfig
import TiltCore
import TiltProtocol

/// Home Assistant MQTT discovery: one retained config message per entity under
/// `<discovery_prefix>/<component>/<node_id>/<object_id>/config`, each tied to one device and
/// to the bridge's availability topic. Field names follow Home Assistant's MQTT sensor,
/// binary sensor and event documentation (checked by MQTTBridgeTests).
public enum Discovery {
    /// One entity: its component (`sensor`, `binary_sensor`, `event`), id and config fields.
    public struct Entity: Sendable {
        /// The Home Assistant component: sensor, binary_sensor or event.
        public var component: String
        /// The entity's object id (last topic level before /config).
        public var objectID: String
        /// The discovery config payload.
        public var config: JSONObject
    }

    /// Home Assistant accepts only `[A-Za-z0-9_-]` in node and object ids.
    public static func nodeID(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" })
    }

    /// The entities this device offers.
    public static func entities(_ m: Configuration.MQTT, topics: Topics, version: String) -> [Entity] {
        let node = nodeID(m.name)
        let device: JSONObject = [
            "identifiers": .array([.string("tiltd_\(node)")]),
            "name": .string("tiltd \(m.name)"),
            "manufacturer": "tiltd",
            "model": "tiltd IMU tilt and places daemon",
            "sw_version": .string(version),
        ]
        func entity(_ component: String, _ object: String, _ name: String, _ fields: JSONObject) -> Entity {
            var c: JSONObject = [
                "name": .string(name),
                "unique_id": .string("tiltd_\(node)_\(object)"),
                "availability_topic": .string(topics.availability),
                "payload_available": "online",
                "payload_not_available": "offline",
                "device": .object(device),
                "origin": .object(["name": "tiltd", "sw_version": .string(version)]),
            ]
            for (k, v) in fields.entries { c[k] = v }
            return Entity(component: component, objectID: object, config: c)
        }
        let attitude = JSONValue.string(topics.events("attitude"))
        return [
            entity(
                "sensor", "roll", "Roll",
                [
                    "state_topic": attitude, "value_template": "{{ value_json.roll_deg }}",
                    "unit_of_measurement": "°", "state_class": "measurement", "icon": "mdi:horizontal-rotate-clockwise",
                ]),
            entity(
                "sensor", "pitch", "Pitch",
                [
                    "state_topic": attitude, "value_template": "{{ value_json.pitch_deg }}",
                    "unit_of_measurement": "°", "state_class": "measurement", "icon": "mdi:rotate-3d-variant",
                ]),
            entity(
                "sensor", "heading", "Heading",
                [
                    "state_topic": attitude, "value_template": .string(headingTemplate),
                    "unit_of_measurement": "°", "state_class": "measurement", "icon": "mdi:compass-outline",
                    "json_attributes_topic": attitude, "json_attributes_template": .string(headingAttributesTemplate),
                ]),
            entity(
                "binary_sensor", "at_rest", "At rest",
                [
                    "state_topic": attitude,
                    "value_template": "{{ 'ON' if value_json.at_rest else 'OFF' }}",
                    "payload_on": "ON", "payload_off": "OFF",
                ]),
            entity(
                "sensor", "score", "Game score",
                [
                    "state_topic": .string(topics.events("game")),
                    "value_template": "{{ value_json.score }}", "state_class": "measurement",
                    "icon": "mdi:trophy",
                ]),
            entity(
                "sensor", "credit_balance", "Credit balance",
                [
                    "state_topic": .string(topics.events("credit")),
                    "value_template": "{{ value_json.balance }}",
                    "state_class": "measurement", "icon": "mdi:cash",
                ]),
            entity(
                "sensor", "fix_age", "GPS fix age",
                [
                    "state_topic": .string(topics.fixAge),
                    "value_template": "{{ value_json.age_s }}", "unit_of_measurement": "s",
                    "device_class": "duration", "state_class": "measurement",
                ]),
            entity(
                "event", "game_decision", "Game decision",
                [
                    "state_topic": .string(topics.gameDecisionEvent),
                    "event_types": ["correct", "skip"],
                ]),
            entity(
                "event", "place", "Place",
                [
                    "state_topic": .string(topics.placeEvent),
                    "event_types": ["enter", "exit", "dwell"],
                ]),
        ]
    }

    /// The heading sensor's state: the true heading when the daemon knows it (a fix in the
    /// model's years), else the magnetic one, else `None` — which Home Assistant's MQTT sensor
    /// takes as "unknown" (no heading: `heading_source` `none`, or a daemon without headings).
    static let headingTemplate =
        "{{ value_json.true_heading_deg if value_json.true_heading_deg is defined"
        + " else (value_json.heading_deg if value_json.heading_deg is defined else None) }}"

    /// Its attributes: which north the state is from, the source, both headings, the field's state.
    static let headingAttributesTemplate =
        "{{ {'north': 'true' if value_json.true_heading_deg is defined"
        + " else ('magnetic' if value_json.heading_deg is defined else None),"
        + " 'heading_source': value_json.heading_source | default('none'),"
        + " 'heading_deg': value_json.heading_deg | default(None),"
        + " 'true_heading_deg': value_json.true_heading_deg | default(None),"
        + " 'mag_disturbed': value_json.mag_disturbed | default(None)} | tojson }}"

    /// The retained config messages to publish: the configs when discovery is on, empty
    /// payloads (which make Home Assistant remove the entities) when it is off.
    public static func messages(
        _ m: Configuration.MQTT, topics: Topics, version: String, qos: Int32
    ) -> [OutgoingMessage] {
        entities(m, topics: topics, version: version).map { e in
            let topic = "\(m.discoveryPrefix)/\(e.component)/\(nodeID(m.name))/\(e.objectID)/config"
            let payload = m.discovery ? Array(JSONValue.object(e.config).jsonText.utf8) : []
            return OutgoingMessage(topic: topic, payload: payload, qos: qos, retain: true)
        }
    }

    /// A socket line turned into a Home Assistant event payload (`event_type` first), or nil when
    /// the line is not one of the event entities' types.
    /// The line's other fields follow as sent, without `class` and `seq`.
    public static func eventPayload(_ line: DaemonLine) -> (gameDecision: Bool, payload: [UInt8])? {
        let type: String
        switch line.body {
        case .game(let g) where g.isDecision: type = g.kind
        case .event(.place, let e) where ["enter", "exit", "dwell"].contains(e): type = e
        default: return nil
        }
        var o: JSONObject = ["event_type": .string(type)]
        for (k, v) in line.object.entries where k != "class" && k != "seq" { o[k] = v }
        return (line.cls == .game, Array(JSONValue.object(o).jsonText.utf8))
    }
}
