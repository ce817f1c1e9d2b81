// The server program of hash_sort's jobs (schedule: :external).
well_behaved::server_main!(hash_sort);
