package io.lockstep.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The DDL blocks of lock-jdbc's SCHEMA.md, as a DBA would copy them. */
final class SchemaGuide {

    private SchemaGuide() {}

    /**
     * The statements of the block marked {@code -- lockstep:<database>}, with the default table name
     * replaced by {@code table}.
     */
    static List<String> statements(String database, String table) {
        String text;
        try {
            text = Files.readString(Path.of("SCHEMA.md"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String marker = "```sql\n-- lockstep:" + database + "\n";
        int start = text.indexOf(marker);
        if (start < 0) {
            throw new AssertionError("SCHEMA.md has no block " + marker.strip());
        }
        start += marker.length();
        String block = text.substring(start, text.indexOf("```", start));
        List<String> statements = new ArrayList<>();
        for (String s : block.split(";")) {
            if (!s.isBlank()) {
                statements.add(s.strip().replace("lockstep_lease", table));
            }
        }
        return statements;
    }
}
