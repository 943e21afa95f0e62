-- description: ICM traffic of the configured addresses between each pair of chains per UTC day: their messages sent and delivered, delivery latency, and the backlog pending at the end of the day (not the chains' whole traffic).
-- unique: network, source_blockchain_id, destination_blockchain_id, activity_day
-- not_null: network, count_sent, count_delivered, count_pending_end_of_day
-- column: source_blockchain_id: the sending chain
-- column: destination_blockchain_id: the receiving chain
-- column: activity_day: the UTC day; every day from the pair's first message to the last day every ICM partition (address) of the network was read (a partition that failed or left the pipeline ends the series there: its later messages are not in the lake)
-- column: network: mainnet or fuji
-- column: count_sent: messages sent during the day
-- column: count_delivered: messages delivered during the day
-- column: count_pending_end_of_day: messages sent by the end of the day and not delivered by then (the backlog)
-- column: avg_latency_seconds: mean delivery latency of the messages delivered during the day (sent time known), to the millisecond
-- column: max_latency_seconds: longest delivery latency of the messages delivered during the day
with deliveries as (
    select * from icm_delivery
),

pairs as (
    select
        network,
        source_blockchain_id,
        destination_blockchain_id,
        min(least(sent_day, delivered_day)) as first_day
    from deliveries
    group by all
),

-- A pair's messages come from every address of its network, so its backlog is known up to the day the
-- least recently read of them was read.
last_day as (
    select
        network,
        min(read_day) as activity_day_max
    from partition_reads
    where stream = 'icm_messages'
    group by network
),

days as (
    select
        pairs.source_blockchain_id,
        pairs.destination_blockchain_id,
        pairs.network,
        cast(spine.day as date) as activity_day
    from pairs
    inner join last_day on pairs.network = last_day.network
    cross join lateral (
        select unnest(generate_series(pairs.first_day, greatest(last_day.activity_day_max, pairs.first_day), interval 1 day)) as day
    ) as spine
),

sent_daily as (
    select
        network,
        source_blockchain_id,
        destination_blockchain_id,
        sent_day as activity_day,
        count(*) as count_sent
    from deliveries
    where sent_day is not null
    group by all
),

delivered_daily as (
    select
        network,
        source_blockchain_id,
        destination_blockchain_id,
        delivered_day as activity_day,
        count(*) as count_delivered,
        -- a message whose source is not indexed was never counted as sent, so it leaves no backlog
        count(sent_day) as count_delivered_sent,
        -- Exact to the millisecond, not a DOUBLE.
        cast(avg(delivery_latency_seconds) as decimal(18, 3)) as avg_latency_seconds,
        max(delivery_latency_seconds) as max_latency_seconds
    from deliveries
    where delivered_day is not null
    group by all
),

final as (
    select
        days.source_blockchain_id,
        days.destination_blockchain_id,
        days.activity_day,
        days.network,
        coalesce(sent_daily.count_sent, 0) as count_sent,
        coalesce(delivered_daily.count_delivered, 0) as count_delivered,
        cast(sum(coalesce(sent_daily.count_sent, 0) - coalesce(delivered_daily.count_delivered_sent, 0)) over (
            partition by days.network, days.source_blockchain_id, days.destination_blockchain_id
            order by days.activity_day
            rows between unbounded preceding and current row
        ) as bigint) as count_pending_end_of_day,
        delivered_daily.avg_latency_seconds,
        delivered_daily.max_latency_seconds
    from days
    left join sent_daily
        on days.network = sent_daily.network
        and days.source_blockchain_id = sent_daily.source_blockchain_id
        and days.destination_blockchain_id = sent_daily.destination_blockchain_id
        and days.activity_day = sent_daily.activity_day
    left join delivered_daily
        on days.network = delivered_daily.network
        and days.source_blockchain_id = delivered_daily.source_blockchain_id
        and days.destination_blockchain_id = delivered_daily.destination_blockchain_id
        and days.activity_day = delivered_daily.activity_day
)

select * from final
