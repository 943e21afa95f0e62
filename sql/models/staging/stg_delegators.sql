-- description: One row per delegation, as of its newest version (status and rewards change over time).
-- unique: tx_hash
-- not_null: node_id, amount_delegated_navax, started_at, ended_at, delegation_status
-- accepted_values: delegation_status = pending | active | completed
-- column: tx_hash: the delegation's AddDelegatorTx / AddPermissionlessDelegatorTx
-- column: delegation_status: pending (not started), active, completed, as last seen
-- column: gross_reward_navax: reward of a completed delegation before the validator's fee
-- column: net_reward_navax: what the delegator received
-- column: estimated_gross_reward_navax: the expected reward of a pending or active one
with source as (
    select * from {{ lake('delegators') }}
),

newest as (
    select *
    from source
    qualify row_number() over (partition by txHash order by _extracted_at desc) = 1
),

final as (
    select
        txHash as tx_hash,
        network,
        nodeId as node_id,
        rewardAddresses as reward_addresses,
        amountDelegated as amount_delegated_navax,
        cast(delegationFee as decimal(9, 4)) as delegation_fee_percent,
        startTimestamp as started_at,
        endTimestamp as ended_at,
        delegationStatus as delegation_status,
        grossReward as gross_reward_navax,
        netReward as net_reward_navax,
        estimatedGrossReward as estimated_gross_reward_navax,
        estimatedNetReward as estimated_net_reward_navax,
        _extracted_at as extracted_at
    from newest
)

select * from final
