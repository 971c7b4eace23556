package postgres

// queries are the statements of a repository, on its qualified table.
type queries struct {
	load, revision, insert, update, keys string
}

func newQueries(table string) queries {
	return queries{
		load:     "SELECT revision, generation, holder, released, renewed_at, ttl_ns FROM " + table + " WHERE key = $1",
		revision: "SELECT revision FROM " + table + " WHERE key = $1",
		// A new record: the row's primary key decides between two
		// creators, and the loser writes nothing.
		insert: "INSERT INTO " + table + " (key, revision, generation, holder, released, renewed_at, ttl_ns)" +
			" VALUES ($1, 1, $2, $3, $4, $5, $6) ON CONFLICT (key) DO NOTHING RETURNING revision",
		// Over a revision: a concurrent writer holds the row lock until it
		// commits, and this statement then re-checks the revision on the
		// row it wrote, so it finds none to update.
		update: "UPDATE " + table + " SET revision = revision + 1, generation = $3, holder = $4, released = $5, renewed_at = $6, ttl_ns = $7" +
			" WHERE key = $1 AND revision = $2 RETURNING revision",
		// Byte order, as Go sorts strings.
		keys: "SELECT key FROM " + table + ` ORDER BY key COLLATE "C"`,
	}
}
