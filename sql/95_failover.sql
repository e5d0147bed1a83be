-- 95_failover: terms carry the timeline (issue 8): the band of the current timeline.
-- A regression cluster never failed over: timeline 1, whose band starts at
-- 0, so terms count up from the sequence as before 1.2.
SELECT timeline, term_floor, term_limit, term_limit = (2::numeric ^ 40) AS limit_is_2_40
  FROM fencing.clock_timeline();
SELECT fencing.fence_next_epoch('failover-band') < 1000 AS small_term_on_timeline_1;
