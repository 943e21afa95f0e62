-- description: Delegators of the configured validators, one row per delegation per snapshot.
-- unique: tx_id, snapshot_at
-- not_null: node_id, weight_navax, started_at, ends_at
-- column: snapshot_at: when avalake observed it (one time per run)
with source as (
    select * from {{ lake('validator_delegators') }}
),

final as (
    select
        txID as tx_id,
        network,
        nodeID as node_id,
        startTime as started_at,
        endTime as ends_at,
        weight as weight_navax,
        potentialReward as potential_reward_navax,
        rewardOwner.addresses as reward_addresses,
        _snapshot_at as snapshot_at
    from source
)

select * from final
