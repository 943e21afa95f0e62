-- description: Validators of the primary network and configured subnets, one row per validator per snapshot.
-- unique: subnet, node_id, snapshot_at
-- not_null: weight, started_at
-- column: subnet: primary, or the subnet id
-- column: snapshot_at: when avalake observed the validator set (one time per run)
-- column: weight: stake (primary network, in nAVAX) or weight (subnet)
with source as (
    select * from {{ lake('validators') }}
),

final as (
    select
        subnet,
        network,
        nodeID as node_id,
        txID as tx_id,
        validationID as validation_id,
        startTime as started_at,
        endTime as ends_at,
        weight,
        potentialReward as potential_reward_navax,
        delegationFee as delegation_fee_percent,
        uptime as uptime_percent,
        connected as is_connected,
        delegatorCount as delegator_count,
        delegatorWeight as delegator_weight_navax,
        coalesce(signer.publicKey, publicKey) as bls_public_key,
        balance as l1_balance_navax,
        _snapshot_at as snapshot_at
    from source
)

select * from final
