-- description: Each partition of the lake and the UTC day it was last read: where the marts' daily series of a partition end.
-- unique: network, stream, partition
-- not_null: keys, read_day
-- compare_to_last: true
-- column: network: mainnet or fuji
-- column: stream: the stream
-- column: partition: the partition, as the lake names it (its keys as JSON)
-- column: keys: the partition's keys (network, chain, address, subject, …)
-- column: read_day: the UTC day of its last read: the source's clock at its newest commit, or that commit's time when the source gave none
--
-- Every build rewrites when each partition was read (_lake.partitions), but its day moves once a day: the
-- daily marts read the day from here, so a build finds this model unchanged, and keeps them, until it does.
with partitions as (
    select * from _lake.partitions
),

final as (
    select
        network,
        stream,
        "partition",
        keys,
        -- Note: the UTC day whatever the session's TimeZone (a cast to date takes the session's day), without
        -- timezone('UTC', …)'s time-zone lookup for every row.
        cast(make_timestamp(epoch_us(read_at)) as date) as read_day
    from partitions
)

select * from final
