// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import TiltCommandLine
import TiltCore
import TiltProtocol

/// `tiltd schema DIR`: writes the protocol's JSON Schemas (`ProtocolSchema`), one file per line
/// class and per command's reply. The package build runs it into /usr/share/tiltd/schema.
struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the socket protocol's JSON Schemas (one per line class and per command reply) to a directory.",
        discussion: """
            Files: line-CLASS.schema.json for each line class, reply-COMMAND.schema.json for each \
            command's reply, and tiltd-line.schema.json, which accepts any line the daemon sends \
            (it refers to the others by file name). JSON Schema draft 2020-12.
            """)

    @Argument(help: "The directory to write to (created if missing).")
    var directory: String

    func run() throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (name, schema) in ProtocolSchema.files {
                let path = directory + "/" + name
                guard FileManager.default.createFile(atPath: path, contents: Data((schema.jsonText + "\n").utf8))
                else { throw ValidationFailure(message: "tiltd schema: cannot write \(path)") }
            }
        } catch let e as ValidationFailure {
            throw e
        } catch {
            throw ValidationFailure(message: "tiltd schema: \(directory): \(error)")
        }
        print("wrote \(ProtocolSchema.files.count) schemas to \(directory)")
    }
}
