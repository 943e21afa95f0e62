-- description: Delegators of the configured validators, one row per delegation per snapshot.
-- unique: tx_id, snapshot_at
-- incremental: true
-- not_null: node_id, weight_navax, started_at, ends_at
-- column: tx_id: the delegation's AddDelegatorTx / AddPermissionlessDelegatorTx
-- column: network: mainnet or fuji
-- column: node_id: the validator delegated to
-- column: started_at: start of the delegation period (UTC)
-- column: ends_at: end of the delegation period (UTC)
-- column: weight_navax: the stake delegated, in nAVAX
-- column: potential_reward_navax: the reward the delegation earns if it completes, before the validator's fee, in nAVAX (null when the node gives none)
-- column: reward_addresses: the P-Chain addresses the reward goes to (null when the node gives no reward owner)
-- column: snapshot_at: when avalake observed it (one time per run, UTC)
with source as not materialized (
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
