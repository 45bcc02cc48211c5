package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgStore keeps the jobs in PostgreSQL, shared by replicas: one row per
// job, its JSON beside the columns the queue, the quotas and the
// retention sweep ask about. A replica takes a queued job with SELECT …
// FOR UPDATE SKIP LOCKED (so two replicas never take the same one) and
// holds it while lease_until is ahead; a job whose replica stopped
// renewing is taken again by the next replica that asks.
type pgStore struct{ pool *pgxpool.Pool }

// pgTimeout bounds one store operation.
const pgTimeout = 30 * time.Second

// pgSchema is created once, under a lock, by the first replica.
const pgSchema = `
CREATE TABLE IF NOT EXISTS onnxconv_jobs (
	id          text PRIMARY KEY,
	created     timestamptz NOT NULL,
	state       text NOT NULL,
	token       text NOT NULL,
	stored      bigint NOT NULL,
	replica     text NOT NULL DEFAULT '',
	lease_until timestamptz,
	job         bytea NOT NULL
);
CREATE INDEX IF NOT EXISTS onnxconv_jobs_queue ON onnxconv_jobs (created) WHERE state IN ('queued', 'running');
CREATE INDEX IF NOT EXISTS onnxconv_jobs_token ON onnxconv_jobs (token);
`

func openPG(url string) (*pgStore, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, errors.New("--store: not a valid postgres:// URL (see https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING-URIS)")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the job store at %s: %w", cfg.ConnConfig.Host, err)
	}
	s := &pgStore{pool: pool}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('onnxconv_jobs'))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pgSchema)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("creating the job table in PostgreSQL at %s: %w", cfg.ConnConfig.Host, err)
	}
	return s, nil
}

func (s *pgStore) close() error { s.pool.Close(); return nil }

func (s *pgStore) shared() bool { return true }

func (s *pgStore) put(j *Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", j.ID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	_, err = s.pool.Exec(ctx, `INSERT INTO onnxconv_jobs (id, created, state, token, stored, replica, job) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET state = $3, token = $4, stored = $5, replica = $6, job = $7`,
		j.ID, j.Created, string(j.State), j.Token, j.Stored, j.Replica, b)
	if err != nil {
		return fmt.Errorf("storing job %s: %w", j.ID, err)
	}
	return nil
}

// decodeJob reads a row's JSON.
func decodeJob(b []byte) (*Job, error) {
	j := new(Job)
	if err := json.Unmarshal(b, j); err != nil {
		return nil, fmt.Errorf("decoding a stored job: %w", err)
	}
	return j, nil
}

func (s *pgStore) get(id string) (*Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT job FROM onnxconv_jobs WHERE id = $1`, id).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoJob
	}
	if err != nil {
		return nil, fmt.Errorf("reading job %s: %w", id, err)
	}
	return decodeJob(b)
}

// write stores j's JSON and columns in tx; lease, when positive, is the
// lease taken from now.
func write(ctx context.Context, tx pgx.Tx, j *Job, lease time.Duration) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", j.ID, err)
	}
	_, err = tx.Exec(ctx, `UPDATE onnxconv_jobs SET state = $2, token = $3, stored = $4, replica = $5, job = $6,
		lease_until = CASE WHEN $7::float8 > 0 THEN now() + make_interval(secs => $7::float8) ELSE lease_until END WHERE id = $1`,
		j.ID, string(j.State), j.Token, j.Stored, j.Replica, b, lease.Seconds())
	if err != nil {
		return fmt.Errorf("storing job %s: %w", j.ID, err)
	}
	return nil
}

func (s *pgStore) update(id string, f func(*Job) error) (*Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	var j *Job
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var b []byte
		err := tx.QueryRow(ctx, `SELECT job FROM onnxconv_jobs WHERE id = $1 FOR UPDATE`, id).Scan(&b)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoJob
		}
		if err != nil {
			return fmt.Errorf("reading job %s: %w", id, err)
		}
		if j, err = decodeJob(b); err != nil {
			return err
		}
		if err := f(j); err != nil {
			return err
		}
		return write(ctx, tx, j, 0)
	})
	return j, err
}

func (s *pgStore) remove(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM onnxconv_jobs WHERE id = $1`, id); err != nil {
		return fmt.Errorf("removing job %s: %w", id, err)
	}
	return nil
}

func (s *pgStore) list() ([]*Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT job FROM onnxconv_jobs ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("listing the jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Job, error) {
		var b []byte
		if err := r.Scan(&b); err != nil {
			return nil, err
		}
		return decodeJob(b)
	})
	if err != nil {
		return nil, fmt.Errorf("listing the jobs: %w", err)
	}
	return out, nil
}

func (s *pgStore) claim(replica string, lease time.Duration) (*Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	var j *Job
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var b []byte
		err := tx.QueryRow(ctx, `SELECT job FROM onnxconv_jobs
			WHERE state = 'queued' OR (state = 'running' AND lease_until < now())
			ORDER BY created LIMIT 1 FOR UPDATE SKIP LOCKED`).Scan(&b)
		if errors.Is(err, pgx.ErrNoRows) {
			return errNoJob
		}
		if err != nil {
			return fmt.Errorf("taking a queued job: %w", err)
		}
		if j, err = decodeJob(b); err != nil {
			return err
		}
		start(j, replica)
		return write(ctx, tx, j, lease)
	})
	return j, err
}

func (s *pgStore) renew(replica string, ids []string, lease time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	rows, err := s.pool.Query(ctx, `UPDATE onnxconv_jobs SET lease_until = now() + make_interval(secs => $3::float8)
		WHERE id = ANY($2) AND state = 'running' AND replica = $1 RETURNING id`, replica, ids, lease.Seconds())
	if err != nil {
		return nil, fmt.Errorf("renewing the leases of %s: %w", replica, err)
	}
	kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("renewing the leases of %s: %w", replica, err)
	}
	return lost(ids, kept), nil
}

// pgUsage is the query of usage.
const pgUsage = `SELECT
	count(*) FILTER (WHERE state IN ('queued', 'receiving')),
	count(*) FILTER (WHERE token = $1 AND state IN ('receiving', 'queued', 'running')),
	coalesce(sum(stored) FILTER (WHERE token = $1), 0)
	FROM onnxconv_jobs`

func (s *pgStore) usage(token string) (queued, active int, stored int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	err = s.pool.QueryRow(ctx, pgUsage, token).Scan(&queued, &active, &stored)
	if err != nil {
		err = fmt.Errorf("counting the jobs: %w", err)
	}
	return queued, active, stored, err
}

// reserve counts and inserts under a transaction-scoped advisory lock
// that every replica's admission takes, so that admissions of all
// replicas happen one at a time.
func (s *pgStore) reserve(j *Job, admit func(queued, active int, stored int64) error) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", j.ID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('onnxconv_admit'))`); err != nil {
			return fmt.Errorf("admitting job %s: %w", j.ID, err)
		}
		var queued, active int
		var stored int64
		if err := tx.QueryRow(ctx, pgUsage, j.Token).Scan(&queued, &active, &stored); err != nil {
			return fmt.Errorf("counting the jobs: %w", err)
		}
		if err := admit(queued, active, stored); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO onnxconv_jobs (id, created, state, token, stored, replica, job) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			j.ID, j.Created, string(j.State), j.Token, j.Stored, j.Replica, b); err != nil {
			return fmt.Errorf("storing job %s: %w", j.ID, err)
		}
		return nil
	})
}
