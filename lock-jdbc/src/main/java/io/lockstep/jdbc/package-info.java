/**
 * Lockstep on a relational database (PostgreSQL, MariaDB, H2; plain JDBC on the hot path, Jdbi for
 * schema checks): tier TRANSACTIONAL, fencing tokens from a database
 * sequence, two modes (a lease row with an expiry on the database's clock, or a row lock held in an open
 * transaction), waiting notified by {@code LISTEN/NOTIFY} on PostgreSQL, and {@link
 * io.lockstep.jdbc.FencedWrites} for the protected resource. See the module README for the DDL.
 */
@NullMarked
package io.lockstep.jdbc;

import org.jspecify.annotations.NullMarked;
