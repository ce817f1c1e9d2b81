// The test jobs' server program (schedule: :external).
well_behaved::server_main!(wb_test_jobs);
